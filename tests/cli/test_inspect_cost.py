"""`ortune inspect` reports the model's cost totals, in JSON and in text."""

from tests import models


def test_inspect_reports_macs_flops_and_activation_memory(ortune, tmp_path):
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    info = ortune("inspect", path, "--json").json()
    assert info["macs"] == 8 * 32 * 32 * 27 + 8 * 32 * 32 * 72 + 80
    assert info["flops"] > 2 * info["macs"]
    assert info["peak_activation_bytes"] == 2 * 8 * 32 * 32 * 4 < info["activation_bytes"]
    assert info["cost"]["inputs"][0]["shape"] == [1, 3, 32, 32]
    text = ortune("inspect", path).stdout
    assert "811.09 kMACs" in text and "x [1, 3, 32, 32]" in text


def test_inspect_counts_on_the_measuring_commands_input_flags(ortune, tmp_path):
    from tests.core.graph.test_cost_shapes import bert, per_layer_hand_count

    path = models.save(bert(1), tmp_path / "bert.onnx")
    info = ortune("inspect", path, "--json", "--dim", "sequence=64").json()
    assert info["macs"] == per_layer_hand_count(64) and info["cost"]["macs_is_lower_bound"] is False
    assert info["cost"]["inputs"][0]["shape"] == [1, 64]
    info = ortune("inspect", path, "--json", "--shape", "input_ids=1,32").json()
    assert info["macs"] == per_layer_hand_count(32)
    assert ortune("inspect", path, "--json", "--free-dim", "sequence=16").json()["macs"] == per_layer_hand_count(16)
    bad = ortune("inspect", path, "--dim", "sequence=x")
    assert bad.code == 2 and "--dim expects a whole number" in bad.stderr


def test_inspect_text_says_at_least_and_names_what_is_left_out(ortune, tmp_path):
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mystery", ["r"], ["y"], domain="example.ops")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])])
    model = helper.make_model(graph, ir_version=10,
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("example.ops", 1)])
    path = models.save(model, tmp_path / "odd.onnx")
    text = ortune("inspect", path).stdout
    assert "at least 0 MACs" in text and "not counted: Mystery_1 (Mystery): operator not in the table" in text


def test_inspect_counts_an_ort_file_from_its_graph(ortune, tmp_path):
    from tests.core.graph.test_cost_ort import _ort

    source, ort_file = _ort(tmp_path, models.cnn(channels=16), "cnn")
    onnx_info, ort_info = ortune("inspect", source, "--json").json(), ortune("inspect", ort_file, "--json").json()
    assert ort_info["format"] == "ort" and ort_info["macs"] == onnx_info["macs"]
    assert "2.80 MMACs" in ortune("inspect", ort_file).stdout
