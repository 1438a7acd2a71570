"""printable: what a terminal, a log file or a label may be given of a name from a file."""

from app.core.text import VALUE_LIMIT, printable, printable_values
from tests.hostile_models import EVIL


def test_every_control_character_of_a_value_is_escaped_newlines_too():
    shown = printable("a\x1b[2Jb\x07c\x9bd\x7fe\nf\tg\rh\u202ei")
    assert shown == "a\\x1b[2Jb\\x07c\\x9bd\\x7fe\\x0af\\x09g\\x0dh\\u202ei"
    assert all(ord(c) >= 0x20 and not 0x7f <= ord(c) <= 0x9f for c in printable(EVIL))


def test_our_own_text_keeps_its_lines_and_tabs():
    assert printable("one\n\ttwo\x1b]0;t\x07", None, lines=True) == "one\n\ttwo\\x1b]0;t\\x07"


def test_a_long_value_is_cut_and_says_how_much_is_left():
    shown = printable("v" * 10_000_000)
    assert shown == "v" * VALUE_LIMIT + f"… ({10_000_000 - VALUE_LIMIT:,} more characters)"
    assert printable("short") == "short" and printable(42) == "42"


def test_a_result_is_copied_printable_keys_too_and_left_exact():
    result = {"name": EVIL, "shape": [EVIL, 4], "ci": (1.0, 2.0), EVIL: None, 3: "x"}
    shown = printable_values(result)
    assert result["name"] == EVIL, "the result itself (and so its JSON) is untouched"
    assert shown["name"] == printable(EVIL) and shown["shape"] == [printable(EVIL), 4]
    assert shown["ci"] == (1.0, 2.0) and shown[printable(EVIL)] is None and shown[3] == "x"
