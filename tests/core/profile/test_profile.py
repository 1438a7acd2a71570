"""Real profiling runs of test models, in the job's child process: what the profile adds up
must be what ORT wrote, and nothing is left behind when a run fails."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from app.core.runner.process import run_job
from app.core.session.config import SessionConfig
from tests import models
from app.core.profile.jobs import PROFILE

UNOPTIMISED = SessionConfig(graph_optimization_level="disable").to_dict()


def node_events(trace_path):
    events = json.loads(trace_path.read_text())
    return [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]


def test_profile_of_a_real_run_matches_the_trace_it_wrote(tmp_path):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "traces" / "mlp.json"
    runs = 4
    profile = run_job(PROFILE,
                      {"model": str(model), "session": UNOPTIMISED, "runs": runs, "out": str(out)})
    assert profile["trace"] == str(out) and out.is_file()
    assert profile["runs"] == runs
    events = node_events(out)
    assert profile["total_node_us"] == sum(e["dur"] for e in events)
    assert profile["node_events"] == len(events)
    graph_ops = Counter(node.op_type for node in onnx.load(str(model)).graph.node)
    assert {row["op_type"]: row["count"] for row in profile["by_op_type"]} == \
        {op: runs * n for op, n in graph_ops.items()}
    for row in profile["by_op_type"]:
        assert row["total_us"] == sum(e["dur"] for e in events if e["args"]["op_name"] == row["op_type"])
    assert profile["by_provider"] == {"CPUExecutionProvider": profile["total_node_us"]}
    assert len(profile["phases"]["run_us"]) == runs
    assert profile["session"]["graph_optimization_level"] == "disable"
    assert [p.name for p in out.parent.iterdir()] == ["mlp.json"]


def test_counts_follow_what_ort_really_ran_after_fusion(tmp_path):
    model = models.save(models.cnn(), tmp_path / "cnn.onnx")
    profile = run_job(PROFILE,
                      {"model": str(model), "runs": 3, "out": str(tmp_path / "cnn.json")})
    events = node_events(tmp_path / "cnn.json")
    per_run = Counter(e["name"] for e in events)
    assert set(per_run.values()) == {3}                 # every executed node, once per run
    assert sum(row["count"] for row in profile["by_op_type"]) == 3 * len(per_run)
    assert "Relu" not in {row["op_type"] for row in profile["by_op_type"]}     # fused into Conv here


def test_an_existing_trace_is_not_replaced_without_force(tmp_path):
    model = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    out = tmp_path / "t.json"
    out.write_text("keep me")
    with pytest.raises(UserError, match="already exists"):
        run_job(PROFILE, {"model": str(model), "runs": 1, "out": str(out)})
    assert out.read_text() == "keep me"
    run_job(PROFILE, {"model": str(model), "runs": 1, "out": str(out),
                                                     "force": True})
    assert out.read_text().startswith("[")


def test_models_of_the_same_name_profiled_in_the_same_second_keep_their_own_traces(tmp_path, monkeypatch):
    from app.core.profile import profile

    monkeypatch.setattr(profile.time, "strftime", lambda fmt: "20260101-120000")   # the same second
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    small = models.save(models.tiny_add(), first / "model.onnx")
    large = models.save(models.mlp(), second / "model.onnx")
    traces = [PROFILE({"model": str(path), "runs": 1}, JobContext())["trace"] for path in (small, large, small)]
    assert [t.rsplit("/", 1)[-1] for t in traces] == ["model-20260101-120000.json", "model-20260101-120000-2.json",
                                                      "model-20260101-120000-3.json"]
    ops = [{e["args"]["op_name"] for e in node_events(Path(t))} for t in traces]
    assert ops[0] == ops[2] == {"Add"} and "Gemm" in ops[1]          # the mlp, its MatMul+Add fused


def failing_model() -> onnx.ModelProto:
    """Loads fine; every run fails: one element cannot be reshaped to seven (and the input's
    size is fixed, so the input probe has nothing to try)."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.array([7], np.int64), "shape")])
    return models._model(graph)


def test_a_failing_run_says_so_and_leaves_no_file(tmp_path):
    model = models.save(failing_model(), tmp_path / "bad.onnx")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    with pytest.raises(UserError) as caught:
        run_job(PROFILE,
                {"model": str(model), "runs": 2, "out": str(out_dir / "bad.json")})
    assert caught.value.kind == "runtime-error" and "bad.onnx" in caught.value.message
    assert list(out_dir.iterdir()) == []


def test_bad_requests_are_refused(tmp_path):
    model = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    for params, words in (({"runs": 0}, "at least 1"), ({"out": str(tmp_path / "t.txt")}, "ends in .json"),
                          ({"model": str(tmp_path / "missing.onnx")}, "no such file")):
        with pytest.raises(UserError, match=words):
            run_job(PROFILE, {"model": str(model), **params}, isolate=False)


def test_cancel_stops_the_runs_and_leaves_no_file(tmp_path):
    from app.core.jobs.errors import JobCancelled
    from app.core.runner.process import JobHandle

    model = models.save(models.cnn(size=64), tmp_path / "cnn.onnx")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    handle = JobHandle(PROFILE,
                       {"model": str(model), "runs": 100_000, "out": str(out_dir / "cnn.json")}).start()

    def cancel_once_running(kind, payload):
        if kind == "progress" and payload["message"].startswith("run "):
            handle.cancel()

    with pytest.raises(JobCancelled):
        handle.wait(cancel_once_running)
    assert list(out_dir.iterdir()) == []
