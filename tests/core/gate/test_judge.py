"""The gate's judgement: speed on the whole interval of the slowdown, the worst criterion wins."""

import math

import pytest

from app.core.gate import judge


@pytest.mark.parametrize("low, high, verdict", [
    (0.06, 0.09, judge.REGRESSION),        # the whole interval beyond 5 %
    (-0.01, 0.01, judge.PASS),             # no difference
    (0.01, 0.05, judge.PASS),              # slower, but by no more than the limit
    (0.03, 0.07, judge.UNDECIDED),         # reaches across the limit
    (-0.02, 0.30, judge.UNDECIDED),        # a noisy run: too wide to say
    (-math.inf, math.inf, judge.UNDECIDED),
])
def test_speed_is_judged_on_the_whole_interval(low, high, verdict):
    assert judge.speed_decision(low, high, 0.05) == verdict


def test_slowdown_inverts_the_speedup_and_its_interval():
    value, low, high = judge.slowdown(0.8, [0.75, 0.9])
    assert value == pytest.approx(0.25)
    assert (low, high) == (pytest.approx(1 / 0.9 - 1), pytest.approx(1 / 0.75 - 1))


def test_the_speed_criterion_says_why_it_is_undecided():
    row = {"speedup": 0.95, "speedup_ci": [0.9, 1.0], "verdict": "no-difference"}
    criterion = judge.speed_criterion(row, 0.05, rounds=40, seconds=9.5, cap_s=10, old_p50_ms=1.0, new_p50_ms=1.05)
    assert criterion["verdict"] == judge.UNDECIDED
    assert "--max-seconds 10" in criterion["summary"] and criterion["figures"]["precision"] > 0


def test_accuracy_drop_past_the_limit_fails_and_missing_labels_skip():
    old = {"label_accuracy": 0.90, "labelled": 50, "samples": 50}
    assert judge.accuracy_criterion(old, {**old, "label_accuracy": 0.88}, 0.01)["verdict"] == judge.REGRESSION
    assert judge.accuracy_criterion(old, {**old, "label_accuracy": 0.895}, 0.01)["verdict"] == judge.PASS
    unlabelled = {"label_accuracy": None, "labelled": 0, "samples": 5}
    assert judge.accuracy_criterion(unlabelled, unlabelled, 0.01)["verdict"] == judge.SKIPPED
    assert "no --data" in judge.accuracy_criterion(None, None, 0.01)["summary"]


def test_memory_growth_past_the_limit_fails():
    assert judge.memory_criterion(100, 115, 0.10)["verdict"] == judge.REGRESSION
    assert judge.memory_criterion(100, 105, 0.10)["verdict"] == judge.PASS
    assert judge.memory_criterion(None, 105, 0.10)["verdict"] == judge.SKIPPED


def test_the_worst_criterion_is_the_gates_verdict_and_its_exit_code():
    def criterion(verdict):
        return {"verdict": verdict}
    assert judge.overall([criterion(judge.PASS), criterion(judge.SKIPPED)]) == judge.PASS
    assert judge.overall([criterion(judge.PASS), criterion(judge.UNDECIDED)]) == judge.UNDECIDED
    assert judge.overall([criterion(judge.UNDECIDED), criterion(judge.REGRESSION)]) == judge.REGRESSION
    assert [judge.exit_code(v) for v in (judge.PASS, judge.REGRESSION, judge.UNDECIDED)] == [0, 5, 6]


def test_a_busy_machine_widens_the_slowdown_but_a_clear_regression_stays_one():
    row = {"speedup": 0.5, "speedup_ci": [0.45, 0.55], "verdict": "slower", "too_busy": True, "rounds_judged": 30,
           "contention": 1.0}
    criterion = judge.speed_criterion(row, 0.05, 30, 20.0, 20.0, 1.0, 2.0)
    assert criterion["verdict"] == judge.REGRESSION and "busy" in criterion["summary"]
    assert criterion["figures"]["too_busy"] is True and criterion["figures"]["compare_verdict"] == "slower"
    low, high = criterion["figures"]["slowdown_ci"]
    assert low < 1 / 0.45 - 1 and high > 1 / 0.55 - 1          # widened, not the raw interval
    assert judge.exit_code(judge.overall([criterion])) == 5
    near = dict(row, speedup=0.97, speedup_ci=[0.95, 0.99])        # within what contention can do: undecided
    assert judge.speed_criterion(near, 0.05, 30, 20.0, 20.0, 1.0, 1.03)["verdict"] == judge.UNDECIDED


def test_a_run_whose_one_pair_of_processes_is_ten_percent_off_is_no_regression():
    """Rounds from four pairs of fresh processes, the new model's first process 10 % slow (an
    offset of that process, not of the model): not a regression, and the summary says how
    many pairs it could not decide in."""
    import numpy as np

    from app.core.measure.alternate import Alternation, BlockPlan, summarize

    rng = np.random.default_rng(3)
    old = [1.0 + 0.002 * rng.standard_normal(8) for _ in range(40)]
    new = [(1.10 if index < 10 else 1.0) * (1.0 + 0.002 * rng.standard_normal(8)) for index in range(40)]
    pairs = [index // 10 for index in range(40)]
    row = summarize(Alternation(BlockPlan(8, rounds=10), [], [old, new], [[0.01] * 40] * 2, [], pairs))[1]
    criterion = judge.speed_criterion(row, 0.05, rounds=40, seconds=30.0, cap_s=60, old_p50_ms=1.0, new_p50_ms=1.0)
    assert criterion["verdict"] == judge.UNDECIDED
    assert "after 4 pair(s) of processes" in criterion["summary"] and criterion["figures"]["pairs"] == 4
    alone = summarize(Alternation(BlockPlan(8, rounds=10), [], [old[:10], new[:10]], [[0.01] * 10] * 2))[1]
    assert judge.speed_criterion(alone, 0.05, 10, 5.0, 60, 1.0, 1.1)["verdict"] == judge.REGRESSION   # one pair alone


def test_the_output_criterion_writes_its_figures_as_every_panel_does():
    """A failed output without its own message is written with the one formatter (cosine to six digits)."""
    from app.core.gate.judge import output_criterion
    row = {"name": "y", "max_abs_diff": 2.0937e-07, "cosine": 0.0267663, "passed": False, "problem": ""}
    fidelity = {"outputs": [row], "passed": False, "max_abs_diff": 2.0937e-07, "min_cosine": 0.0267663,
                "tolerance": {"atol": 1e-4, "rtol": 1e-3, "min_cosine": 0.9999}}
    summary = output_criterion(fidelity, None, None)["summary"]
    assert "max |Δ| 2.09e-07, cosine 0.0267663" in summary


def test_a_gate_measures_on_until_its_verdict_is_told_as_compare_would():
    """A slowdown within the limit whose direction the rule cannot yet tell calls for another
    pair, as compare's rule does, so the gate and compare name one verdict for one pair."""
    from app.core.gate.jobs import unanswered

    row = {"speedup": 1.0, "speedup_ci": [0.90, 1.06], "contention": 0.0, "measure": "wall"}
    assert "cannot yet tell" in unanswered(row, 1.0)                        # passes ×2, but could not tell
    assert unanswered({**row, "speedup_ci": [0.95, 1.05]}, 1.0) is None      # no difference: answered
    assert unanswered({**row, "speedup": 0.5, "speedup_ci": [0.45, 0.55]}, 0.05) is None   # a regression
    assert "across the limit" in unanswered({**row, "speedup_ci": [0.92, 1.01]}, 0.05)
