"""The one verdict rule: a table of intervals against busy states, and the words every view uses."""

import math

import pytest

from app.core.verdict import (COULD_NOT_TELL, FASTER, NO_DIFFERENCE, SLOWER, inflation, judge_speed,
                                    verdict_words)


@pytest.mark.parametrize("speedup, low, high, contention, measure, verdict", [
    # quiet: the interval alone decides
    (1.04, 1.021, 1.06, 0.0, "wall", FASTER),               # all of it beyond the ±2 % band
    (1.4, 1.3, 1.5, 0.0, "wall", FASTER),
    (0.8, 0.6, 0.97, 0.0, "wall", SLOWER),
    (1.0, 0.95, 1.08, 0.0, "wall", NO_DIFFERENCE),          # within ±10 %: nothing worth a change
    (1.01, 1.004, 1.018, 0.0, "wall", NO_DIFFERENCE),       # measurable, but within the band
    (1.02, 1.007, 1.031, 0.0, "wall", NO_DIFFERENCE),       # reaches into the band: two copies of one file
    (1.1, 0.82, 1.59, 0.0, "wall", COULD_NOT_TELL),         # from the band to far beyond ±10 %
    (1.0, -math.inf, math.inf, 0.0, "wall", COULD_NOT_TELL),
    (1.0, math.nan, math.nan, 0.0, "wall", COULD_NOT_TELL),
    # busy: the interval is widened, never voided
    (10.59, 6.36, 21.67, 1.0, "wall", FASTER),              # a tenfold int8 win beside a core burner
    (0.20, 0.12, 0.39, 1.0, "wall", SLOWER),                # a fivefold loss stays a loss
    (0.19, 0.17, 0.21, 0.8, "wall", SLOWER),
    (0.075, 0.034, 0.171, 1.0, "wall", SLOWER),
    (1.08, 1.03, 1.14, 1.0, "wall", COULD_NOT_TELL),        # ×1.03 could be ×1.018 stretched by contention
    (1.08, 1.03, 1.14, 1.0, "cpu", FASTER),                 # on CPU time a wait for the core does not count
    (1.3, 1.2, 1.4, 1.0, "wall", FASTER),                   # a gap of 20 % is more than contention's 70 % of 11 %
    (1.0, 0.99, 1.01, 1.0, "wall", NO_DIFFERENCE),          # two copies of one file beside a core burner
    (1.0, 0.93, 1.07, 1.0, "wall", NO_DIFFERENCE),          # contention makes no gap from nothing
    (1.05, 0.97, 1.14, 1.0, "wall", COULD_NOT_TELL),        # reaches beyond ±10 % busy or quiet
    (1.0, 0.99, 1.01, 0.5, "cpu", NO_DIFFERENCE),
])
def test_the_rule_over_intervals_and_busy_states(speedup, low, high, contention, measure, verdict):
    judged = judge_speed(speedup, low, high, contention, measure)
    assert judged.verdict == verdict
    assert judged.why.startswith(verdict_words(verdict) + ":")
    assert judged.answered is (verdict != COULD_NOT_TELL)


def test_a_quiet_machine_widens_nothing_and_claims_what_it_measured():
    judged = judge_speed(1.4, 1.3, 1.5)
    assert judged.widened == (1.3, 1.5) and judged.claim == 1.4 and "widened" not in judged.why


def test_a_busy_winner_is_claimed_at_the_lower_figure_and_says_so():
    judged = judge_speed(10.59, 6.36, 21.67, 1.0)
    assert judged.claim == pytest.approx(max(6.36, 1 + 9.59 / inflation(1.0)))
    assert 6.36 <= judged.claim < 10.59
    assert judged.widened[0] == pytest.approx(1 + 5.36 / inflation(1.0))
    assert 1.02 < judged.widened[0] < 6.36
    assert judged.widened[1] == 21.67
    assert "busy" in judged.why and "claimed at" in judged.why


def test_a_busy_loser_is_claimed_at_the_higher_figure():
    judged = judge_speed(0.20, 0.12, 0.39, 1.0)
    assert 0.20 < judged.claim <= 0.39


def test_more_contention_widens_more_and_only_toward_one():
    quiet, half, full = (judge_speed(1.5, 1.3, 1.7, c).widened for c in (0.0, 0.5, 1.0))
    assert quiet[0] > half[0] > full[0] > 1.0 and quiet[1] == half[1] == full[1] == 1.7
    slow_quiet, slow_full = (judge_speed(0.6, 0.5, 0.7, c).widened for c in (0.0, 1.0))
    assert slow_quiet[1] < slow_full[1] < 1.0 and slow_quiet[0] == slow_full[0] == 0.5
    assert judge_speed(1.0, 0.9, 1.1, 1.0).widened == (0.9, 1.1)
    assert inflation(1.0, "cpu") < inflation(1.0, "wall")


def test_every_verdict_reads_in_one_vocabulary():
    assert [verdict_words(v) for v in (FASTER, SLOWER, NO_DIFFERENCE, COULD_NOT_TELL)] == [
        "faster", "slower", "no difference", "could not tell"]
    assert verdict_words(None) == "–"


def test_a_gap_is_taken_back_alike_for_faster_and_slower_and_never_across_one():
    from app.core.verdict import deflated

    assert deflated(2.0, 2.0) == pytest.approx(1.5) and deflated(0.5, 2.0) == pytest.approx(1 / 1.5)
    assert deflated(1.0, 1.7) == 1.0 and deflated(1.3, 1.0) == 1.3
    assert all(deflated(r, 1.7) > 1.0 for r in (1.001, 2.0, 50.0)) and all(deflated(r, 1.7) < 1.0 for r in (0.999, 0.02))


def test_a_move_too_small_to_show_is_not_said():
    # on CPU time a little contention moves the ends by less than the third digit: the sentence
    # read "widened to [×0.627–×0.886]" beside the same interval, and "claimed at ×0.726, not the ×0.726 measured"
    verdict = judge_speed(0.7262, 0.6271, 0.8862, contention=0.02, measure="cpu")
    assert verdict.verdict == SLOWER
    assert "widened" not in verdict.why and "not the" not in verdict.why and verdict.claim == 0.7262
    moved = judge_speed(0.7262, 0.6271, 0.8862, contention=1.0, measure="wall")
    assert "widened to" in moved.why and "claimed at" in moved.why
