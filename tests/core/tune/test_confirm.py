"""Judging the finalists: a setting is offered only when, alone in its own process, it was
faster than the user's settings; the race's figures stay as the race saw them."""

import numpy as np

from app.core.measure.alternate import Alternation, BlockPlan
from app.core.session.config import SessionConfig
from app.core.tune.confirm import NOTHING_FASTER_LABEL, finalists, judge


def _trial(label, relative, alive=True, round_=None, error=None):
    session = SessionConfig(intra_op_num_threads=len(label)).to_dict()
    return {"label": label, "session": session, "latency_ms": 10.0 * relative, "relative": relative,
            "race_speedup": 1.0 / relative, "ci_ms": None, "blocks": 3, "alive": alive,
            "eliminated_in_round": round_, "error": error}


def _race(trials, cancelled=False):
    return {"strategy": "race", "default_ms": 10.0, "default_blocks": 9, "trials": trials, "failed": [],
            "merged": [], "trials_used": 9, "space_size": len(trials), "rounds": 2, "cancelled": cancelled,
            "stop_reason": "Stopped after 1 s and 9 trials: all settings but one were eliminated by round 2.",
            "seconds": 1.0, "inputs": [], "input_dims": {}}


def _alternation(*member_ms):
    """Rounds in which each member's block has a median of its ms (±1 % wobble)."""
    wobble = np.array([0.99, 1.0, 1.01, 1.0, 0.995, 1.005, 1.0, 0.99, 1.01, 1.0])
    blocks = [[np.full(5, ms * w) for w in wobble] for ms in member_ms]
    reports = [{"latency_ms": {"p50": ms}, "fidelity": None if i == 0 else {"passed": True}}
               for i, ms in enumerate(member_ms)]
    return Alternation(BlockPlan(5, rounds=10), reports, blocks)


def test_finalists_are_the_last_standing_then_the_last_dropped():
    trials = [_trial("early", 0.80, alive=False, round_=0), _trial("broke", 0.85, alive=False, round_=1, error="x"),
              _trial("late", 0.90, alive=False, round_=1), _trial("leader", 0.95)]
    assert finalists(trials, 2) == [3, 2]
    assert finalists(trials, 5) == [3, 2, 0]


def test_a_finalist_faster_alone_is_offered_with_its_remeasured_figures():
    trials = [_trial("a", 0.8), _trial("bb", 0.9)]
    result = judge(_race(trials), SessionConfig(), [0, 1], _alternation(10.0, 8.0, 9.9))
    best = result["best"]
    assert best["label"] == "a" and result["clearly_faster"] and result["verdict"] == "faster"
    assert abs(result["speedup"] - 1.25) < 1e-9 and result["speedup_ci"][0] > 1.02
    assert best["latency_ms"] == 8.0 and best["race_latency_ms"] == 8.0
    assert result["default"]["latency_ms"] == 10.0
    second = result["trials"][1]
    assert second["remeasured"] and second["verdict"] == "no-difference" and second["outputs_match"] is True
    assert "1.25× as fast" in result["note"]


def test_the_race_winner_slower_alone_is_never_offered():
    trials = [_trial("a", 0.93), _trial("bb", 0.95), _trial("ccc", 0.97)]
    result = judge(_race(trials), SessionConfig(), [0, 1], _alternation(10.0, 10.7, 10.6))
    assert result["best"]["label"] == NOTHING_FASTER_LABEL
    assert result["best"]["session"] == SessionConfig().to_dict()
    assert (result["speedup"], result["speedup_ci"], result["verdict"]) == (1.0, [1.0, 1.0], "reference")
    assert not result["clearly_faster"]
    assert "Nothing measured was faster" in result["note"] and "×1.05" in result["note"]   # the race's claim for bb
    first = result["trials"][0]
    assert first["verdict"] == "slower" and first["latency_ms"] == 9.3 and first["remeasured_ms"] == 10.7
    assert result["trials"][2]["remeasured"] is False and result["trials"][2]["speedup"] is None
    assert abs(result["race_speedup"] - 1 / 0.93) < 1e-9


def test_a_gain_inside_the_noise_band_is_not_clearly_faster():
    result = judge(_race([_trial("a", 0.9)]), SessionConfig(), [0], _alternation(10.0, 9.9))
    assert result["best"]["label"] == NOTHING_FASTER_LABEL
    assert result["trials"][0]["verdict"] == "no-difference"
    assert "not clearly faster" in result["note"]


def test_a_stopped_race_offers_nothing():
    result = judge(_race([_trial("a", 0.5)], cancelled=True), SessionConfig(), [0], None)
    assert result["best"]["label"] == NOTHING_FASTER_LABEL and result["alternation"] is None
    assert "stopped" in result["note"] and result["default"]["latency_ms"] == 10.0
