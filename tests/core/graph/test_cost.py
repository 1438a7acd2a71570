"""Cost: MACs against a hand count, the per-operator formulas, and the summary's totals."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.core.graph.cost import model_cost
from app.core.graph.formulas import node_cost
from app.core.graph.jobs import SUMMARY
from app.core.session.input_spec import FeedSpec
from tests import models


def _plain_cnn(size: int) -> object:
    """conv 3->16 k3 s1 p1, relu, maxpool 2, conv 16->32 k3 s2 p1 (no bias), gap, gemm 32->10."""
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.normal(size=s).astype(np.float32), n) for n, s in (
        ("w1", (16, 3, 3, 3)), ("b1", (16,)), ("w2", (32, 16, 3, 3)), ("fc", (10, 32)), ("fcb", (10,)))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["y"], transB=1),
    ]
    graph = helper.make_graph(nodes, "plain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 10])], initializer=weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_plain_cnn_costs_its_hand_count_on_the_plans_shapes(tmp_path):
    path = models.save(_plain_cnn(64), tmp_path / "plain.onnx")
    result = model_cost(path, FeedSpec(mode="zeros", dims={"n": 2, "h": 64, "w": 64}))
    conv1 = 2 * 16 * 64 * 64 * (3 * 3 * 3)          # every output reads 3 channels x 3x3
    conv2 = 2 * 32 * 16 * 16 * (16 * 3 * 3)         # pooled to 32x32, stride 2 -> 16x16
    gemm = 2 * 10 * 32
    hand = conv1 + conv2 + gemm
    assert abs(result["macs"] - hand) <= hand * 0.01
    assert result["macs"] == hand
    assert result["inputs"][0]["shape"] == [2, 3, 64, 64]
    assert result["not_counted"] == {}
    relu = next(r for r in result["nodes"] if r["op_type"] == "Relu")
    assert relu["flops"] == 2 * 16 * 64 * 64 and relu["activation_bytes"] == 2 * 16 * 64 * 64 * 4
    conv = next(r for r in result["nodes"] if r["op_type"] == "Conv")
    assert conv["parameters"] == 16 * 27 + 16 and conv["flops"] == 2 * conv1 + 2 * 16 * 64 * 64


def test_peak_activation_is_what_is_alive_at_once_not_the_sum(tmp_path):
    path = models.save(_plain_cnn(32), tmp_path / "plain.onnx")
    result = model_cost(path, FeedSpec(mode="zeros", dims={"n": 1, "h": 32, "w": 32}))
    conv_out = 16 * 32 * 32 * 4
    # at the Relu: its input and output are alive together, and nothing larger ever is
    assert result["peak_activation_bytes"] == 2 * conv_out
    assert result["activation_bytes"] > result["peak_activation_bytes"]


def test_an_unknown_operator_is_left_out_and_named(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mystery", ["r"], ["y"], domain="example.ops")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("example.ops", 1)])
    result = model_cost(models.save(model, tmp_path / "odd.onnx"))
    assert result["flops"] == 32
    assert result["not_counted"] == {"Mystery (operator not in the table)": 1}


@pytest.mark.parametrize("op, ins, outs, attrs, macs", [
    ("MatMul", [[2, 5, 64], [64, 32]], [[2, 5, 32]], {}, 2 * 5 * 32 * 64),
    ("Gemm", [[64, 8], [16, 64]], [[8, 16]], {"transA": 1}, 8 * 16 * 64),
    ("ConvTranspose", [[1, 4, 8, 8], [4, 2, 3, 3]], [[1, 2, 17, 17]], {}, 4 * 8 * 8 * 2 * 9),
    ("MatMulNBits", [[1, 7, 128], None], [[1, 7, 256]], {"K": 128, "N": 256}, 7 * 256 * 128),
    ("QLinearMatMul", [[3, 16], None, None, [16, 4]], [[3, 4]], {}, 3 * 4 * 16),
    ("Attention", [[1, 10, 24], [24, 72]], [[1, 10, 24]], {}, 10 * 24 * 72 + 2 * 10 * 10 * 24),
])
def test_formulas_with_macs(op, ins, outs, attrs, macs):
    assert node_cost(op, ins, outs, attrs) == (macs, 2 * macs)


def test_formulas_without_macs():
    assert node_cost("Softmax", [[2, 10]], [[2, 10]], {}) == (0, 100)
    assert node_cost("MaxPool", [[1, 1, 4, 4]], [[1, 1, 2, 2]], {"kernel_shape": [2, 2]}) == (0, 16)
    assert node_cost("Reshape", [[6], [2]], [[2, 3]], {}) == (0, 0)
    assert node_cost("Add", [[2, 3], [3]], [None], {}) is None
    assert node_cost("Mystery", [[1, 2, 3]], [[1, 2, 3]], {}) == "unknown"


def test_the_summary_carries_the_totals_and_survives_an_uncountable_model(tmp_path):
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    summary = SUMMARY({"path": str(path)}, None)
    assert summary["macs"] == 8 * 32 * 32 * 27 + 8 * 32 * 32 * 72 + 80
    assert summary["node_count"] == 7 and "nodes" not in summary["cost"]
    summary = SUMMARY({"path": str(path), "inputs": {"values": {"nope": 1.0}}}, None)
    assert summary["macs"] is None and "no input named nope" in summary["cost"]["error"]
    assert summary["node_count"] == 7


def test_small_constants_keep_their_values_so_shapes_follow_a_reshape(tmp_path):
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(np.array([-1, 64], np.int64), "to"),
               numpy_helper.from_array(rng.normal(size=(64, 512)).astype(np.float32), "w")]  # 128 KiB: left out
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "to"], ["flat"]), helper.make_node("MatMul", ["flat", "w"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result = model_cost(models.save(model, tmp_path / "reshape.onnx"))
    assert result["macs"] == 4 * 512 * 64 and result["not_counted"] == {}
