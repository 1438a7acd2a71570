"""The input plan reads the graph: values that feed shapes, sizes or indices are valid,
never random; image sizes come from metadata; every input says where it came from."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from app.core.jobs.errors import UserError
from app.core.session.inputs import FeedSpec, model_feeds
from tests import models


def _save(graph, tmp_path, metadata=None, opset=17):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    for key, value in (metadata or {}).items():
        model.metadata_props.add(key=key, value=value)
    return models.save(model, tmp_path / "m.onnx")


def _run(path, spec=None):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds, info = model_feeds(path, session, spec or FeedSpec())
    session.run(None, feeds)       # the plan's inputs really run
    return feeds, {row["name"]: row for row in info["inputs"]}


def test_token_ids_stay_below_the_embedding_rows(tmp_path):
    table = helper.make_tensor("table", TensorProto.FLOAT, [50, 4], np.ones(200, np.float32))
    graph = helper.make_graph([helper.make_node("Gather", ["table", "ids"], ["y"])], "g",
                              [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "sequence"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [table])
    feeds, rows = _run(_save(graph, tmp_path), FeedSpec(vocab_size=100_000))
    assert feeds["ids"].max() < 50 and feeds["ids"].shape == (1, 128)
    assert rows["ids"]["values"] == "token ids below the 50 rows of table"


def test_shape_and_size_inputs_get_valid_values(tmp_path):
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Expand", ["r", "to"], ["e"]),
             helper.make_node("TopK", ["e", "k"], ["v", "i"], axis=-1),
             helper.make_node("Unsqueeze", ["v", "axes"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
              helper.make_tensor_value_info("to", TensorProto.INT64, ["n"]),
              helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
              helper.make_tensor_value_info("axes", TensorProto.INT64, [1])]
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                                                   helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    feeds, rows = _run(_save(graph, tmp_path), FeedSpec(vocab_size=10 ** 9))
    assert feeds["shape"].tolist() == [2, 3] and feeds["k"].tolist() == [1] and feeds["axes"].tolist() == [0]
    assert rows["shape"]["source"] == "graph" and "reshapes to" in rows["shape"]["values"]


def test_image_size_comes_from_the_metadata(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["images"], ["y"])], "g",
                              [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["?", 3, "?", "?"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    feeds, rows = _run(_save(graph, tmp_path, {"imgsz": "[320, 256]"}))
    assert feeds["images"].shape == (1, 3, 320, 256)
    assert rows["images"]["source"] == "default"        # the batch is still a guess
    plain, plain_rows = _run(_save(graph, tmp_path))
    assert plain["images"].shape == (1, 3, 224, 224)


def test_sample_rate_and_audio_window(tmp_path):
    nodes = [helper.make_node("Cast", ["sr"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["input", "f"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["?", "?"]),
                                           helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    feeds, rows = _run(_save(graph, tmp_path))
    assert feeds["input"].shape == (1, 512) and int(feeds["sr"]) == 16000
    assert rows["sr"]["values"] == "16000 Hz" and rows["input"]["reason"] == "batch 1; 512 samples, one window at 16 kHz"


def test_user_values_win_and_say_so(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    feeds, rows = _run(_save(graph, tmp_path), FeedSpec(dims={"batch": 2, "sequence": 7}))
    assert feeds["x"].shape == (2, 7) and rows["x"]["source"] == "user"


def test_sizes_an_earlier_probe_found_run_but_stay_marked_as_found(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    spec = FeedSpec(dims={"batch": 3}, probed={"sequence": 256, "batch": 9})
    feeds, rows = _run(_save(graph, tmp_path), spec)
    assert feeds["x"].shape == (3, 256), "the user's size first, then the probe's"
    assert rows["x"]["source"] == "probed" and "256, which ran when Find working inputs" in rows["x"]["reason"]


def test_a_probed_size_must_be_a_number_and_a_reason():
    with pytest.raises(UserError, match="probed size of sequence"):
        FeedSpec.from_dict({"probed": {"sequence": -1}}).checked()


def _one_op(tmp_path, op, inputs, **attributes):
    """A graph of one `op` over `inputs` ([(name, type, shape)]), its output y."""
    graph = helper.make_graph([helper.make_node(op, [i[0] for i in inputs], ["y"], **attributes)], "g",
                              [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return _run(_save(graph, tmp_path, opset=18))[0]


def test_a_fixed_count_of_reduce_axes_is_kept(tmp_path):
    feeds = _one_op(tmp_path, "ReduceSum", [("x", TensorProto.FLOAT, [2, 3, 4]), ("axes", TensorProto.INT64, [0])])
    assert feeds["axes"].shape == (0,)


def test_split_sizes_fill_the_axis_in_as_many_parts_as_declared(tmp_path):
    graph = helper.make_graph([helper.make_node("Split", ["x", "split"], ["a", "b", "c"], axis=1)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 7]),
                               helper.make_tensor_value_info("split", TensorProto.INT64, [3])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abc"])
    feeds, _ = _run(_save(graph, tmp_path, opset=18))
    assert feeds["split"].tolist() == [2, 2, 3]


def test_class_ids_of_a_loss_stay_below_its_classes(tmp_path):
    feeds = _one_op(tmp_path, "NegativeLogLikelihoodLoss",
                    [("scores", TensorProto.FLOAT, [8, 5]), ("target", TensorProto.INT64, [8])])
    assert 0 <= feeds["target"].min() and feeds["target"].max() < 5


def test_a_scalar_flag_is_an_array(tmp_path):
    feeds = _one_op(tmp_path, "Where", [("flag", TensorProto.BOOL, []), ("a", TensorProto.FLOAT, [2]),
                                        ("b", TensorProto.FLOAT, [2])])
    assert isinstance(feeds["flag"], np.ndarray) and feeds["flag"].shape == ()


def test_only_a_waveform_gets_the_audio_window(tmp_path):
    graph = helper.make_graph([helper.make_node("ReduceSum", ["input"], ["y"]), helper.make_node("Neg", ["state"], ["z"])],
                              "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["b", "?"]),
                                    helper.make_tensor_value_info("state", TensorProto.FLOAT, [2, "?", 128]),
                                    helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    feeds, _ = _run(_save(graph, tmp_path, opset=18))
    assert feeds["input"].shape == (1, 512) and feeds["state"].shape == (2, 1, 128)


def test_a_value_for_every_element_is_the_users(tmp_path):
    nodes = [helper.make_node("Cast", ["sr"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["input", "f"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 4]),
                                           helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = _save(graph, tmp_path)
    feeds, rows = _run(path, FeedSpec(values={"sr": 8000, "input": 0.5}))
    assert int(feeds["sr"]) == 8000 and (feeds["input"] == 0.5).all()
    assert rows["sr"]["source"] == "user" and rows["sr"]["values"] == "8000 (yours)"
    with pytest.raises(UserError, match="must be a whole number"):
        _run(path, FeedSpec(values={"sr": 0.5}))
    with pytest.raises(UserError, match="no input named rate"):
        _run(path, FeedSpec(values={"rate": 1}))


def test_a_shape_is_known_before_planning_as_far_as_the_user_and_the_last_plan_say():
    from app.core.session.input_plan import known_shape

    image = {"name": "x", "dtype": "float", "shape": ["batch", 3, "?", "?"]}
    assert known_shape(image, {}, {}, None) == [(1, "plan"), (3, "fixed"), (224, "plan"), (224, "plan")], (
        "before a plan: what the plan would choose for an image, not 1")
    assert known_shape(image, {}, {}, None, {"imgsz": "[320, 256]"})[2:] == [(320, "plan"), (256, "plan")]
    wave = {"name": "input", "dtype": "float", "shape": ["?", "?"]}
    assert known_shape(wave, {}, {}, None, audio=True) == [(1, "plan"), (512, "plan")]
    assert known_shape(image, {"batch": 2}, {}, [1, 3, 320, 320]) == [
        (2, "yours"), (3, "fixed"), (320, "plan"), (320, "plan")]
    assert known_shape(image, {"batch": 2}, {"x": [4, 3, 64, 64]}, None) == [
        (4, "yours"), (3, "fixed"), (64, "yours"), (64, "yours")]
    assert known_shape(image, {"x[2]": 100}, {}, None)[2] == (100, "yours"), "an unnamed dim by its label"
    loose = {"name": "y", "dtype": "float", "shape": None}
    assert known_shape(loose, {}, {}, None) == [] and known_shape(loose, {}, {}, [5]) == [(5, "plan")]
    assert known_shape(loose, {}, {"y": [7, 8]}, [5]) == [(7, "yours"), (8, "yours")]


def test_an_unnamed_dimension_an_earlier_probe_found_is_probed_not_yours(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    feeds, rows = _run(_save(graph, tmp_path), FeedSpec(probed={"x[0]": 5}))
    assert feeds["x"].shape == (5, 3)
    assert rows["x"]["source"] == "probed" and "yours" not in rows["x"]["reason"]
    assert "5, which ran when Find working inputs tried it" in rows["x"]["reason"]
