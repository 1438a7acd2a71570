"""The probe: a model ONNX Runtime refuses on the plan's guessed sizes is run on sizes it
accepts, and the report says which were tried and why; one nothing fixes says what to set."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.core.jobs.errors import UserError
from app.core.jobs.memory import rss_bytes
from app.core.jobs.protocol import JobContext
from app.core.runner.process import run_job
from app.core.session.jobs import PROBE_INPUTS
from app.core.session.probe import first_run, prepare_feeds, refusal_text
from tests import models


def needs_long_input() -> onnx.ModelProto:
    """A 256-tap convolution over a signal (like a voice-activity model's first layer):
    a signal shorter than 256 samples is refused."""
    weight = numpy_helper.from_array(np.full((1, 1, 256), 0.01, np.float32), "w")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    graph = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "axes"], ["x3"]), helper.make_node("Conv", ["x3", "w"], ["y"])],
        "long", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "length"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[weight, axes])
    return models._model(graph)


def indexes_a_table() -> onnx.ModelProto:
    """Rows of a 4×4 table picked by an input less ten: only ids 6 to 13 are in range, so
    neither random ids, zeros nor ones are."""
    table = numpy_helper.from_array(np.ones((4, 4), np.float32), "table")
    ten = numpy_helper.from_array(np.array(10, np.int64), "ten")
    graph = helper.make_graph(
        [helper.make_node("Sub", ["idx", "ten"], ["row"]), helper.make_node("Gather", ["table", "row"], ["y"])],
        "table", [helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[table, ten])
    return models._model(graph)


def cubes_its_input() -> onnx.ModelProto:
    """Memory grows with the cube of the audio's length: 512 samples take 512 MiB."""
    def axes(name, values):
        return numpy_helper.from_array(np.array(values, np.int64), name)
    nodes = [helper.make_node("Reshape", ["audio", "col"], ["a"]), helper.make_node("Reshape", ["audio", "row"], ["b"]),
             helper.make_node("Reshape", ["audio", "depth"], ["c"]), helper.make_node("Mul", ["a", "b"], ["ab"]),
             helper.make_node("Mul", ["ab", "c"], ["abc"]), helper.make_node("ReduceSum", ["abc"], ["s"], keepdims=0),
             helper.make_node("Neg", ["s"], ["n"]), helper.make_node("Abs", ["n"], ["m"]),
             helper.make_node("Sqrt", ["m"], ["y"])]
    graph = helper.make_graph(
        nodes, "cube", [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, "samples"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[axes("col", [-1, 1, 1]), axes("row", [1, -1, 1]), axes("depth", [1, 1, -1])])
    return models._model(graph)


def session(path):
    import onnxruntime as ort
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def test_a_length_the_model_refuses_is_probed_until_one_runs(tmp_path):
    path = models.save(needs_long_input(), tmp_path / "long.onnx")
    run = prepare_feeds(path, session(path))
    assert run.worked and run.feeds["x"].shape == (1, 256) and run.outputs[0].shape == (1, 1, 1)
    row = run.info["inputs"][0]
    assert row["source"] == "probed" and row["shape"] == [1, 256]
    assert row["reason"].startswith("probed: 256 (128 was refused: Conv: Invalid input shape")
    assert [a.dims for a in run.tried] == [{"length": 128}, {"length": 256}]
    assert run.tried[0].error and run.tried[-1].error is None
    assert run.info["guessed"] == ["length"] and run.info["dims"] == {"length": 256}


def test_a_model_that_runs_on_the_plan_is_run_once(tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    run = prepare_feeds(path, session(path))
    assert len(run.tried) == 1 and run.tried[0].error is None and run.run_ns > 0
    assert {row["source"] for row in run.info["inputs"]} != {"probed"}


def test_the_probe_job_reports_the_dims_to_keep(tmp_path):
    path = models.save(needs_long_input(), tmp_path / "long.onnx")
    result = run_job(PROBE_INPUTS, {"path": str(path)})
    assert result["worked"] and result["dims"] == {"length": 256} and result["guessed"] == ["length"]
    assert result["tried"][0] == {"dims": {"length": 128}, "error": result["tried"][0]["error"]}
    assert "Conv" in result["tried"][0]["error"] and result["tried"][-1]["error"] is None
    assert result["inputs"][0]["source"] == "probed" and result["message"] == ""


def test_a_refused_value_points_to_the_input_flag(tmp_path):
    path = models.save(indexes_a_table(), tmp_path / "table.onnx")
    with pytest.raises(UserError) as caught:
        prepare_feeds(path, session(path))
    message = caught.value.message
    assert message.startswith("table.onnx: ONNX Runtime refused to run it: Gather: indices element out of data bounds")
    assert "--input idx=FILE.npy" in message and "Inputs table" in message
    result = run_job(PROBE_INPUTS, {"path": str(path)})
    assert not result["worked"] and "--input idx" in result["message"]
    assert [t.get("values") for t in result["tried"]] == [None, "zeros", "ones"]


def test_random_ids_a_model_refuses_are_probed_as_zeros(tmp_path):
    table = numpy_helper.from_array(np.ones((4, 4), np.float32), "table")
    graph = helper.make_graph(
        [helper.make_node("Neg", ["table"], ["rows"]), helper.make_node("Gather", ["rows", "idx"], ["y"])], "hidden",
        [helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[table])
    path = models.save(models._model(graph), tmp_path / "hidden.onnx")
    run = prepare_feeds(path, session(path))
    assert run.worked and not run.feeds["idx"].any()
    assert run.info["inputs"][0]["values"].startswith("probed: zeros (random ids were refused: Gather: indices")


def test_a_refused_shape_points_to_the_dim_and_shape_flags(tmp_path):
    reshape = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "odd",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.array([-1, 3, 7, 11, 13], np.int64), "shape")])
    path = models.save(models._model(reshape), tmp_path / "odd.onnx")
    run = first_run(path, session(path))
    assert not run.worked and 2 <= len(run.tried) <= 9
    assert "--dim n=N or --shape x=1,1" in run.message and "Session tab's Inputs table" in run.message


def test_a_run_past_the_memory_budget_is_too_big_and_a_smaller_size_is_probed(tmp_path):
    path = models.save(cubes_its_input(), tmp_path / "cube.onnx")
    model = session(path)
    ctx = JobContext(memory_budget=rss_bytes() + (300 << 20))
    run = prepare_feeds(path, model, ctx=ctx)
    assert run.tried[0].dims == {"samples": 512} and run.tried[0].too_big
    assert "needed more than" in run.tried[0].error
    assert run.worked and run.info["dims"]["samples"] < 512
    assert all(a.dims["samples"] < 512 for a in run.tried[1:])


def test_inputs_alone_past_the_budget_are_refused_before_running(tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    with pytest.raises(UserError) as caught:
        prepare_feeds(path, session(path), ctx=JobContext(memory_budget=100))
    assert caught.value.kind == "over-memory-budget" and "--memory-limit" in caught.value.message


def test_refusals_read_in_one_line_without_source_locations():
    text = ("[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running Reshape node. "
            "Name:'r1' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/tensor/reshape_helper.h:91 "
            "onnxruntime::ReshapeHelper::ReshapeHelper(const onnxruntime::TensorShape&, onnxruntime::TensorShapeVector&, "
            "bool) input_shape_size == requested_shape_size was false. The input tensor cannot be reshaped to the "
            "requested shape. Input shape:{1,128}, requested shape:{1,3000}\n")
    assert refusal_text(RuntimeError(text)) == ("Reshape r1: The input tensor cannot be reshaped to the requested "
                                                "shape. Input shape:{1,128}, requested shape:{1,3000}")


def test_a_refusal_inside_a_subgraph_names_the_node_that_refused():
    text = ("[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running If node. Name:'If_0' "
            "Status Message: Non-zero status code returned while running LSTM node. Name:'rnn' Status Message: "
            "Input X must have 3 dimensions only. Actual:{1,512}")
    assert refusal_text(RuntimeError(text)) == "LSTM rnn: Input X must have 3 dimensions only. Actual:{1,512}"


@pytest.mark.parametrize("rows, error, hint", [
    ([{"name": "ids", "dtype": "int64", "values": "random ids below 1,000"}], "indices out of range, idx=57",
     "--value ids=V"),
    ([{"name": "x", "dtype": "float32", "values": "random normal, seed 0"}],
     "Gather: indices element out of data bounds, idx=57", None),
    ([{"name": "rate", "dtype": "float32", "values": "random normal, seed 0"}],
     "invalid argument: rate must be positive", "--value rate=V"),
])
def test_a_value_refusal_points_at_the_input_to_blame_or_at_none(rows, error, hint):
    from app.core.session.probe import Attempt, refusal_message

    message = refusal_message("m.onnx", [Attempt({}, error)], {"inputs": rows, "guessed": []}, None)
    assert error in message
    assert (hint in message) if hint else ("--value" not in message and "--dim" not in message)
