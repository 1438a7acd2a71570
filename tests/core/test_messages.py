"""ONNX Runtime's refusals as one whole line, the reason first; hints that match the cause."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from app.core.jobs.errors import UserError
from app.core.runner.failure import error_info
from app.core.jobs.stdio import capture_output
from app.core.ort_messages import is_shape_problem, ort_text
from tests import models

RESHAPE = ("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Non-zero status code returned while running Reshape node. "
           "Name:'r' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/tensor/reshape_helper.h:39 "
           "onnxruntime::ReshapeHelper::ReshapeHelper(const onnxruntime::TensorShape&, onnxruntime::TensorShapeVector&, "
           "bool) size != 0 && (input_shape.Size() % size) == 0 was false. The input tensor cannot be reshaped to the "
           "requested shape. Input shape:{1,20}, requested shape:{3,7}")
WINDOWS = (r"D:\a\_work\1\s\onnxruntime\core\providers\cpu\math\element_wise_ops.h:560 "
           "onnxruntime::BroadcastIterator::Append axis == 1 || axis == largest was false. Attempting to broadcast an "
           "axis by a dimension other than 1. 3 by 5")
TEMPLATE = ("Status Message: /src/onnxruntime/core/providers/cpu/math/gemm.cc:120 onnxruntime::common::Status "
            "onnxruntime::Gemm<T>::Compute(onnxruntime::OpKernelContext*) const [with T = float] "
            "K == B_shape[0] was false. Gemm: the inner dimensions differ: 7 and " + "9" * 500)


@pytest.mark.parametrize("text, reason", [
    (RESHAPE, "Status Message: The input tensor cannot be reshaped to the requested shape. Input shape:{1,20}, "
              "requested shape:{3,7}"),
    (WINDOWS, "Attempting to broadcast an axis by a dimension other than 1. 3 by 5"),
    (TEMPLATE, "Status Message: Gemm: the inner dimensions differ: 7 and " + "9" * 500),
])
def test_signatures_and_locations_go_and_the_end_stays(text, reason):
    short = ort_text(text)
    assert short.endswith(reason)
    assert "::" not in short and ".h:" not in short and ".cc:" not in short and "was false" not in short
    assert "…" not in short


def test_colour_codes_and_stack_traces_are_dropped():
    assert ort_text("\x1b[1;31mthe reason\x1b[m\nStacktrace:\n#0 0x7f foo") == "the reason"


def _run_error(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception) as caught:
        session.run(None, feeds)
    return caught.value


class Params:
    path = "model.onnx"


def test_a_shape_refusal_hints_at_dim_and_a_value_refusal_does_not():
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], np.array([3, 7], np.int64))
    reshape = helper.make_model(helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 7])], [shape]),
        opset_imports=[helper.make_opsetid("", 17)])
    reshape.ir_version = 8
    info = error_info(_run_error(reshape, {"x": np.zeros((1, 20), np.float32)}), Params())
    assert info["message"].startswith("model.onnx: ONNX Runtime refused to run it: ")
    assert "requested shape:{3,7}" in info["message"] and "--dim/--shape" in info["message"]
    assert "onnxruntime::" not in info["message"]
    data = helper.make_tensor("data", TensorProto.FLOAT, [10, 2], np.zeros(20, np.float32))
    gather = helper.make_model(helper.make_graph(
        [helper.make_node("Gather", ["data", "i"], ["y"])], "g",
        [helper.make_tensor_value_info("i", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [data]),
        opset_imports=[helper.make_opsetid("", 17)])
    gather.ir_version = 8
    info = error_info(_run_error(gather, {"i": np.array([57], np.int64)}), Params())
    assert "idx=57" in info["message"] and "--dim" not in info["message"]
    assert not is_shape_problem("indices element out of data bounds, idx=57")


def test_relayed_library_output_has_no_colour_codes():
    import os
    with capture_output() as captured:
        os.write(2, b"\x1b[1;31m2024 [E:onnxruntime:, x.cc:1 f] failed\x1b[m\n")
    assert captured.text == "2024 [E:onnxruntime:, x.cc:1 f] failed\n"


def test_a_refusal_names_the_cause_whole_through_the_probe(tmp_path):
    from app.core.session.config import SessionConfig
    from app.core.bench.jobs import BENCH
    from app.core.runner.process import run_job

    data = helper.make_tensor("data", TensorProto.FLOAT, [10, 2], np.zeros(20, np.float32))
    index = helper.make_tensor("index", TensorProto.INT64, [1], np.array([57], np.int64))
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["x2"]), helper.make_node("Gather", ["data", "index"], ["g"]),
         helper.make_node("Identity", ["g"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2]),
         helper.make_tensor_value_info("x2", TensorProto.FLOAT, [1])], [data, index]),
        opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = models.save(model, tmp_path / "fixed.onnx")
    with pytest.raises(UserError) as caught:
        run_job(BENCH, {"path": str(path), "session": SessionConfig().to_dict(), "run": {"iterations": 1}})
    message = caught.value.message
    assert "idx=57" in message and "inclusive range [-10,9]" in message and "--dim" not in message
    assert "--value" not in message          # the index is the model's own, not an input's
    assert "\n" not in message and "…" not in message


@pytest.mark.parametrize("text", [" ".join(["word"] * 20000), "a" * 100_000, "onnxruntime::x " * 5000])
def test_a_huge_message_is_shortened_quickly(text):
    import time

    started = time.perf_counter()
    ort_text(text)
    assert time.perf_counter() - started < 1.0
