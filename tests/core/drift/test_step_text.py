"""A repair step in words: a node kept in another's place is named with it, and a step whose
outputs did not move from an earlier step's says so."""

from app.core.drift.repair import _same_outputs
from app.core.drift.step_text import added_text, outputs_text


def _step(number, cosine, diff, added=(), instead=None):
    return {"step": number, "cosine": cosine, "max_abs_diff": diff, "added": list(added), "passed": False,
            "check": "failed", "problem": "", "kept_instead": instead or {}}


def test_a_node_folded_away_is_named_with_the_node_kept_in_its_place():
    step = _step(2, 0.98, 0.1, ["Conv_16", "BatchNormalization_12"], {"BatchNormalization_12": ["Conv_12"]})
    assert added_text(step) == "Conv_16, BatchNormalization_12 (in Conv_12)"
    assert added_text(_step(1, 0.97, 0.2)) == "–"


def test_a_step_whose_outputs_equal_an_earlier_steps_says_which():
    steps = [_step(1, 0.979230, 0.31), _step(2, 0.980793, 0.29)]
    again = _step(3, 0.979230, 0.31)
    again["same_as"] = _same_outputs(again, steps)
    assert again["same_as"] == 1
    assert outputs_text(again) == "failed (as step 1)"
    moved = _step(3, 0.979230, 0.30)
    assert _same_outputs(moved, steps) is None
    assert _same_outputs(_step(3, None, None), [_step(1, None, None)]) is None
