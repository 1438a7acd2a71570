"""Numbers as people read them: durations in the unit their size reads best in, one number
format per column, no binary noise."""

from app.core.formatting import duration_column, duration_text, shared_decimals, significant, tidy_floats


def test_durations_take_the_unit_their_size_reads_best_in():
    assert duration_text(294.851) == "295 ms"          # not "294,851 µs"
    assert duration_text(0.0123) == "12.3 µs"
    assert duration_text(0.5) == "500 µs"
    assert duration_text(2767.2) == "2.77 s"
    assert duration_text(1.5) == "1.5 ms"
    assert duration_text(0.9999) == "1 ms"              # rounds up to the next unit, never "1,000 µs"
    assert duration_text(0) == "0 ms" and duration_text(None) == "–"


def test_significant_digits_without_exponent_or_trailing_zeros():
    assert significant(1.0187484949999999, 4) == "1.019"
    assert significant(2.0) == "2"
    assert significant(12345.6) == "12,346"
    assert significant(0.000123) == "0.000123"


def test_a_column_shares_one_number_of_decimals():
    assert shared_decimals([944.747, 2767.2]) == 0
    assert shared_decimals([0.361, 1.059, 12.0]) == 3
    assert shared_decimals([0.00001, 5.0], most=4) == 4
    assert shared_decimals(["a", None, True]) == 0


def test_float_noise_is_rounded_away_everywhere_in_a_report():
    report = {"speedup": 1.0187484949999999, "cells": [{"p50": 0.30000000000000004, "runs": 3}], "ok": True}
    assert tidy_floats(report) == {"speedup": 1.01875, "cells": [{"p50": 0.3, "runs": 3}], "ok": True}


def test_a_column_of_durations_has_one_unit_and_one_format():
    assert duration_column([944.747, 2767.2]) == ("s", ["0.945", "2.767"])
    assert duration_column([0.361, 0.0425, None]) == ("µs", ["361.0", "42.5", "–"])


def test_figures_side_by_side_can_keep_their_trailing_zeros():
    assert duration_text(27.7, 4, trim=False) == "27.70 ms" and duration_text(27.7, 4) == "27.7 ms"
    assert duration_text(0.13, 4, trim=False) == "130.0 µs"
