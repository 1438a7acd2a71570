"""profile-diff: intervals over runs, verdicts, the models the traces came from, and the
alternating timing held against the profile."""

import pytest

from app.core.jobs.protocol import JobContext
from app.core.profile.diff import MIN_RUNS, diff_profiles, with_measurement
from app.core.profile.jobs import DIFF_TRACES, PROFILE
from app.core.profile.trace_reader import read_trace
from app.core.profile.traces import summarize
from tests import models
from tests.traces import Node, write_trace


def _profile(path, nodes, runs):
    return summarize(read_trace(write_trace(path, nodes, runs)))


def test_per_run_times_leave_the_warm_up_out(tmp_path):
    profile = _profile(tmp_path / "t.json", [Node("a", "Conv", [500, 100, 120]), Node("b", "Relu", [9, 3, 4])], 3)
    assert profile["per_run_by_op_type"] == {"Conv": [100, 120], "Relu": [3, 4]}


def test_a_clear_gain_gets_an_interval_and_a_verdict(tmp_path):
    noisy = [100, 104, 97, 101, 99, 103, 98, 102, 100, 96]
    before = _profile(tmp_path / "b.json", [Node("mm", "MatMul", noisy), Node("add", "Add", [10, 11, 9, 10])], 21)
    after = _profile(tmp_path / "a.json", [Node("mm", "MatMul", [v // 2 for v in noisy]),
                                           Node("add", "Add", [10, 9, 11, 10])], 21)
    diff = diff_profiles(before, after)
    rows = {row["op_type"]: row for row in diff["by_op_type"]}
    low, high = rows["MatMul"]["ratio_ci"]
    assert 1.8 < low <= rows["MatMul"]["speedup"] <= high < 2.2 and rows["MatMul"]["verdict"] == "faster"
    assert rows["Add"]["verdict"] == "no-difference" and rows["Add"]["ratio_ci"][0] < 1 < rows["Add"]["ratio_ci"][1]
    total = diff["total"]
    assert total["ratio"] == diff["speedup"] and total["verdict"] == "faster"
    assert total["ci"][0] <= total["ratio"] <= total["ci"][1]


def test_too_few_runs_give_ratios_without_intervals(tmp_path):
    before = _profile(tmp_path / "b.json", [Node("mm", "MatMul", [100, 90, 80])], MIN_RUNS)   # MIN_RUNS - 1 steady
    after = _profile(tmp_path / "a.json", [Node("mm", "MatMul", [50, 45, 40])], MIN_RUNS + 1)
    diff = diff_profiles(before, after)
    assert diff["total"]["ratio"] == pytest.approx(2.0, rel=0.1)
    assert diff["total"]["ci"] is None and diff["total"]["verdict"] is None
    assert diff["by_op_type"][0]["ratio_ci"] is None and diff["by_op_type"][0]["verdict"] is None


def _compare(speedup, low, high):
    return {"models": [{"speedup": 1.0}, {"speedup": speedup, "speedup_ci": [low, high], "verdict": "faster",
                                          "rounds": 12}],
            "speedup_definition": "speedup = reference p50 / model p50"}


@pytest.mark.parametrize("measured, disagrees", [((1.98, 1.9, 2.06), False), ((1.2, 1.15, 1.25), True)])
def test_the_profile_is_held_against_the_alternating_timing(tmp_path, measured, disagrees):
    before = _profile(tmp_path / "b.json", [Node("mm", "MatMul", [100, 102, 98, 101, 99])], 11)
    after = _profile(tmp_path / "a.json", [Node("mm", "MatMul", [50, 51, 49, 50, 50])], 11)
    judged = with_measurement(diff_profiles(before, after), _compare(*measured))
    assert judged["measured"]["speedup"] == measured[0] and judged["measured"]["speedup_ci"] == list(measured[1:])
    assert judged["disagrees"] is disagrees


def test_traces_ortune_recorded_name_their_models(tmp_path):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    other = models.save(models.mlp(seed=1), tmp_path / "other.onnx")
    for name, path in (("b", model), ("a", other)):
        PROFILE({"model": str(path), "out": str(tmp_path / f"{name}.json"), "runs": 8}, JobContext())
    diff = DIFF_TRACES({"before": str(tmp_path / "b.json"), "after": str(tmp_path / "a.json")}, JobContext())
    assert diff["models"] == {"before": str(model.resolve()), "after": str(other.resolve())}
    assert diff["total"]["ci"] is not None and diff["total"]["verdict"] is not None
    (tmp_path / "b.json").write_text((tmp_path / "b.json").read_text() + " ")     # a changed trace is no longer known
    diff = DIFF_TRACES({"before": str(tmp_path / "b.json"), "after": str(tmp_path / "a.json"),
                        "after_model": str(model)}, JobContext())
    assert diff["models"] == {"before": None, "after": str(model)}
