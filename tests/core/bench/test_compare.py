"""Compare: same inputs and session for every variant, fidelity against the first."""

import numpy as np
import pytest

from app.core.bench.compare import output_fidelity
from app.core.bench.jobs import COMPARE
from app.core.jobs.errors import JobCancelled, UserError
from app.core.store.history import History
from app.core.jobs.protocol import JobContext
from tests import models


def test_fidelity_of_known_arrays():
    reference = {"y": np.array([1.0, 2.0, 3.0, 4.0], np.float32), "ids": np.array([1, 2], np.int64)}
    outputs = {"y": np.array([1.0, 2.5, 3.0, np.nan], np.float32), "ids": np.array([1, 2], np.int64)}
    result = output_fidelity(reference, outputs)
    y = result["outputs"][0]
    assert y["max_abs_diff"] == pytest.approx(0.5)
    assert y["max_rel_diff"] == pytest.approx(0.25)
    a, b = np.array([1, 2, 3.0]), np.array([1, 2.5, 3.0])
    assert y["cosine"] == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    assert y["nonfinite"] == 1 and result["nonfinite"] == 1
    assert result["outputs"][1]["max_abs_diff"] == 0.0
    assert result["passed"] is False                       # a NaN where the source had a number
    assert output_fidelity(reference, {"y": np.zeros(3)})["outputs"][0]["problem"].startswith("shape")
    assert output_fidelity(reference, dict(reference))["passed"] is True


def test_compare_two_variants(tmp_path):
    from onnxconverter_common import float16

    source = models.mlp()
    first = models.save(source, tmp_path / "mlp.onnx")
    second = models.save(float16.convert_float_to_float16(source, keep_io_types=False), tmp_path / "mlp16.onnx")
    from app.core.launch.start import run

    progress = []
    result = run(COMPARE, {"models": [{"path": str(first), "label": "fp32"}, {"path": str(second), "label": "fp16"}],
                           "run": {"warmup": 2, "iterations": 100}, "pairs": 2, "max_seconds": 1},
                 on_event=lambda kind, payload: progress.append(payload) if kind == "progress" else None)
    reference, variant = result["models"]
    assert [reference["label"], variant["label"]] == ["fp32", "fp16"]
    assert reference["speedup"] == 1.0 and reference["speedup_ci"] == [1.0, 1.0] and reference["fidelity"] is None
    assert reference["verdict"] == "reference"
    low, high = variant["speedup_ci"]
    assert low <= variant["speedup"] <= high
    assert variant["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
    alternation = result["alternation"]
    # two pairs of fresh processes, 50 runs each (the fewest rounds of the smallest blocks); a third only where the
    # interval could not answer and one more fitted in the 1 s (a loaded machine's pairs can be that quick)
    pairs = alternation["pairs_run"]
    assert pairs in (2, 3) and variant["rounds"] == reference["rounds"] == alternation["rounds_run"] == 10 * pairs
    assert variant["iterations"] == reference["iterations"] == 10 * pairs * alternation["block_runs"] == 50 * pairs
    assert "reference p50 / model p50" in result["speedup_definition"]
    assert variant["size_bytes"] < reference["size_bytes"]
    # the fp16 model reads the reference's generated feeds from a file: not the user's file
    assert [row["source"] for row in variant["inputs"]] == [row["source"] for row in reference["inputs"]] != ["file"]
    assert variant["inputs"][0]["reason"].startswith("the reference's inputs: ")
    assert variant["inputs"][0]["values"] == reference["inputs"][0]["values"] != "yours"
    assert variant["inputs"][0]["dtype"] == "float16" and variant["inputs"][0]["shape"] == reference["inputs"][0]["shape"]
    fidelity = variant["fidelity"]
    # fp16 weights drift a little, so the same inputs give close but not equal outputs
    assert 0 < fidelity["max_abs_diff"] < 0.05 and fidelity["min_cosine"] > 0.999
    assert any("fp16" in p["message"] for p in progress)
    stored = History().get(result["history_id"])
    assert stored["kind"] == "compare" and stored["report"]["models"][1]["label"] == "fp16"
    assert stored["variant"] == "fp32 vs fp16" and stored["model_path"] == str(first.resolve())


def test_identical_models_and_twenty_times_the_work(tmp_path):
    """The same file twice gives the same outputs; a model that does twenty times the work is
    slower, and judged so, however loaded the machine (two times the work was not: a copy once
    measured 1.3 times slower). How often a copy reads "no difference" is
    benchmarks/compare_truth.py's to measure (19 of 20)."""
    once = models.save(models.mlp(width=256, depth=2), tmp_path / "once.onnx")
    copy = tmp_path / "copy.onnx"
    copy.write_bytes(once.read_bytes())
    twenty = models.save(models.mlp(width=256, depth=40), tmp_path / "twenty.onnx")
    run = {"warmup": 3, "iterations": 100}
    result = COMPARE({"models": [{"path": str(once)}, {"path": str(copy)}, {"path": str(twenty)}],
                      "session": {"intra_op_num_threads": 1, "inputs": {"dims": {"batch": 32}}}, "run": run, "record": False,
                      "max_seconds": 1}, JobContext())     # the first pairs answer it: no more sets while the copy's is open
    _, same, slower = result["models"]
    assert same["fidelity"]["max_abs_diff"] == 0
    assert slower["verdict"] == "slower" and slower["speedup_ci"][1] < 0.5
    assert same["speedup"] > 2 * slower["speedup"]


def test_cancel_ends_the_comparison(tmp_path):
    first = models.save(models.mlp(), tmp_path / "a.onnx")
    second = models.save(models.mlp(seed=3), tmp_path / "b.onnx")
    ctx = None

    def emit(kind, payload):
        if kind == "progress" and payload["message"].startswith("round"):
            ctx.cancel()

    ctx = JobContext(emit)
    with pytest.raises(JobCancelled):
        COMPARE({"models": [{"path": str(first)}, {"path": str(second)}], "run": {"duration_s": 60},
                 "record": False}, ctx)


def test_a_cancelled_comparison_sends_the_rounds_it_measured_as_partial(tmp_path):
    first = models.save(models.mlp(), tmp_path / "a.onnx")
    second = models.save(models.mlp(seed=3), tmp_path / "b.onnx")
    sent, ctx = [], None

    def emit(kind, payload):
        if kind == "data":
            sent.append(payload)
        if kind == "progress" and payload["message"].startswith("round 3"):
            ctx.cancel()

    ctx = JobContext(emit)
    with pytest.raises(JobCancelled):
        COMPARE({"models": [{"path": str(first), "label": "a"}, {"path": str(second), "label": "b"}],
                 "run": {"duration_s": 60}, "record": False}, ctx)
    planned = [event["payload"] for event in sent if event["kind"] == "inputs"]
    assert [row["shape"] for row in planned[0]["inputs"]] == [[1, 64]], "the reference's inputs, while it runs"
    (partial,) = [event["payload"] for event in sent if event["kind"] == "compare-partial"]
    assert partial["partial"] is True and partial["baseline"] == "a" and partial["inputs"] == planned[0]["inputs"]
    rounds = partial["alternation"]["rounds_run"]
    reference, other = partial["models"]
    assert rounds >= 3 and reference["rounds"] == other["rounds"] == rounds
    assert reference["verdict"] == "reference" and other["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
    assert other["iterations"] == rounds * partial["alternation"]["block_runs"] and other["latency_ms"]["p50"] > 0
    assert other["size_bytes"] == second.stat().st_size and other["fidelity"] is None
    low, high = other["speedup_ci"]
    assert low <= other["speedup"] <= high


def test_a_member_that_fails_ends_the_comparison(tmp_path):
    first = models.save(models.mlp(), tmp_path / "a.onnx")
    with pytest.raises(UserError) as info:
        COMPARE({"models": [{"path": str(first)}, {"path": str(tmp_path / "gone.onnx")}], "record": False},
                JobContext())
    assert "gone.onnx" in info.value.message


def test_compare_needs_two_models(tmp_path):
    with pytest.raises(UserError, match="at least two"):
        COMPARE({"models": [{"path": str(tmp_path / "a.onnx")}]}, JobContext())


def with_text(constant: str | None = None):
    """Text in, text out (passed through, or a constant), beside a float path."""
    from onnx import TensorProto, helper

    text = (helper.make_node("Identity", ["words"], ["said"], name="say") if constant is None else
            helper.make_node("Constant", [], ["said"], name="say",
                             value=helper.make_tensor("c", TensorProto.STRING, [3], [constant.encode()] * 3)))
    graph = helper.make_graph([text, helper.make_node("Add", ["x", "x"], ["y"], name="double")], "text",
                              [helper.make_tensor_value_info("words", TensorProto.STRING, [3]),
                               helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("said", TensorProto.STRING, [3]),
                               helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return models._model(graph)


def test_text_inputs_and_outputs_travel_between_the_processes(tmp_path):
    source = models.save(with_text(), tmp_path / "echo.onnx")
    same = models.save(with_text(), tmp_path / "echo2.onnx")
    other = models.save(with_text("other"), tmp_path / "other.onnx")
    result = COMPARE({"models": [{"path": str(p)} for p in (source, same, other)], "record": False,
                      "run": {"warmup": 1, "iterations": 20}, "max_seconds": 1}, JobContext())   # outputs, not speed
    by_name = [{o["name"]: o for o in row["fidelity"]["outputs"]} for row in result["models"][1:]]
    assert by_name[0]["said"]["passed"] is True and by_name[0]["y"]["passed"] is True
    assert by_name[1]["said"]["passed"] is False and by_name[1]["said"]["problem"] == "texts differ"
    assert result["inputs"][0]["dtype"] == "string"


def test_the_sessions_memory_limit_holds_in_every_members_process(tmp_path):
    """The limit travels with the session: the members, each a process of its own, get it too."""
    first = models.save(models.mlp(), tmp_path / "a.onnx")
    second = models.save(models.mlp(seed=3), tmp_path / "b.onnx")
    with pytest.raises(UserError) as info:
        COMPARE({"models": [{"path": str(first)}, {"path": str(second)}], "session": {"memory_limit": "20M"},
                 "run": {"warmup": 1, "iterations": 20}, "record": False}, JobContext())
    assert info.value.kind == "over-memory-budget" and "more than 0.02 GiB" in info.value.message
