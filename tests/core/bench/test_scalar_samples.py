"""A model with a scalar input (a sample rate, as a voice-activity model takes) runs on a
data folder in every member of a comparison: the reference keeps each sample's feeds, and the
next member reads a scalar back as a 0-d array, never as a numpy scalar ONNX Runtime refuses."""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from app.core.bench.accuracy import score_samples
from app.core.bench.sample_log import read_samples
from app.core.jobs.protocol import JobContext
from app.core.session.inputs import FeedSpec


def scalar_rate_model(path):
    graph = helper.make_graph(
        [helper.make_node("Cast", ["sr"], ["rate"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "rate"], ["y"])], "rate",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def data_folder(tmp_path, count=3):
    folder = tmp_path / "data"
    folder.mkdir()
    for index in range(count):
        np.savez(folder / f"s{index}.npz", x=np.full((1, 4), index, np.float32), sr=np.array(16000, np.int64))
    return folder


def test_a_scalar_input_is_read_back_as_a_zero_dimensional_array(tmp_path):
    model = scalar_rate_model(tmp_path / "rate.onnx")
    data = data_folder(tmp_path)
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    work = tmp_path / "work"
    work.mkdir()
    spec = FeedSpec(data=str(data))
    score_samples(model, session, spec, work, True, JobContext())
    feeds = [feeds for feeds, _ in read_samples(work)]
    assert [type(f["sr"]) for f in feeds] == [np.ndarray] * 3 and feeds[0]["sr"].shape == ()
    result = score_samples(model, session, spec, work, False, JobContext())    # the next member: it ran
    assert result["samples"] == 3 and result["against_reference"]["mean_abs_error"] == 0.0

