"""An .ort file is counted from the graph it holds, as its .onnx source is: the same formulas
on the same shapes, within 2 % (the ORT-format graph is optimised: fused activations, and on
x86-64 the NCHWc layout, whose channels are padded to its block)."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from app.core.convert.jobs import MAKE
from app.core.graph.cost import model_cost
from app.core.graph.jobs import SUMMARY
from app.core.graph.stand_ins import with_stand_ins
from app.core.session.graph_hints import read_hints
from tests import models


def _ort(tmp_path, model, name: str, platform: str | None = None):
    source = models.save(model, tmp_path / f"{name}.onnx")
    output = tmp_path / f"{name}.{platform or 'here'}.ort"
    options = {"target_platform": platform} if platform else {}
    MAKE({"kind": "ort", "input": str(source), "output": str(output), "speed_s": 0, "options": options}, None)
    return source, output


@pytest.mark.parametrize("maker, platform", [
    (lambda: models.cnn(channels=16), None),          # this machine's platform: NCHWc on x86-64
    (lambda: models.cnn(channels=16), "any"),
    (models.mlp, None),                                # FusedGemm
    (models.transformer_block, None),
])
def test_an_ort_file_counts_what_its_onnx_source_counts(tmp_path, maker, platform):
    source, ort_file = _ort(tmp_path, maker(), "model", platform)
    onnx_cost, ort_cost = model_cost(source), model_cost(ort_file)
    assert onnx_cost["macs"] > 0 and not onnx_cost["macs_is_lower_bound"]
    assert ort_cost["macs"] == pytest.approx(onnx_cost["macs"], rel=0.02)
    assert not ort_cost["macs_is_lower_bound"] and ort_cost["not_counted"] == {}
    assert ort_cost["inputs"] == onnx_cost["inputs"]


def test_the_summary_of_an_ort_file_carries_its_cost(tmp_path):
    source, ort_file = _ort(tmp_path, models.cnn(channels=16), "cnn")
    summary = SUMMARY({"path": str(ort_file), "inputs": {"mode": "zeros", "dims": {"batch": 2}}}, None)
    assert summary["format"] == "ort"
    assert summary["macs"] == pytest.approx(2 * model_cost(source)["macs"], rel=0.02)
    assert summary["cost"]["inputs"][0]["shape"] == [2, 3, 32, 32]


def test_an_ort_files_metadata_gives_the_same_input_hints(tmp_path):
    model = models.cnn(channels=16)
    helper.set_model_props(model, {"imgsz": "[64, 48]"})
    source, ort_file = _ort(tmp_path, model, "sized", "any")
    assert read_hints(ort_file).image_size() == (64, 48) == read_hints(source).image_size()
    assert model_cost(ort_file)["inputs"][0]["shape"] == model_cost(source)["inputs"][0]["shape"]


def test_stand_ins_give_fused_operators_their_shapes_and_leave_the_model_alone():
    graph = helper.make_graph(
        [helper.make_node("FusedMatMul", ["a", "b"], ["s"], domain="com.microsoft", transB=1, alpha=0.5),
         helper.make_node("FusedConv", ["x", "w"], ["c"], domain="com.microsoft", activation="Relu"),
         helper.make_node("ReorderOutput", ["c"], ["y"], domain="com.microsoft.nchwc", channels=3)],
        "g", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 5, 7]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 9, 7]),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("w", TensorProto.FLOAT, [8, 4, 3, 3], [0.0] * 288)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1),
                                                    helper.make_opsetid("com.microsoft.nchwc", 1)])
    import onnx
    standing = with_stand_ins(model)
    inferred = onnx.shape_inference.infer_shapes(standing)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    assert shapes["s"] == [2, 5, 9] and shapes["c"] == [1, 8, 4, 4] and shapes["y"] == [1, 3, 4, 4]
    assert [n.op_type for n in model.graph.node] == ["FusedMatMul", "FusedConv", "ReorderOutput"]
