"""The formulas added for recurrent, attention, Einsum and quantised operators, and how
control flow enters the totals."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.core.graph.cost import model_cost
from app.core.graph.formulas import node_cost
from tests import models


@pytest.mark.parametrize("op, ins, outs, attrs, macs", [
    ("GRU", [[10, 2, 16], [1, 96, 16], [1, 96, 32]], [None], {}, 10 * 2 * 96 * (16 + 32)),
    ("RNN", [[2, 10, 16], [2, 8, 16], [2, 8, 8]], [None], {"layout": 1}, 2 * 10 * 2 * 8 * (16 + 8)),
    ("Einsum", [[2, 3, 4], [2, 4, 5]], [[2, 3, 5]], {"equation": b"bij,bjk->bik"}, 2 * 3 * 4 * 5),
    ("Gemm", [[8, 64], [16, 64]], [None], {"transB": 1}, 8 * 16 * 64),      # the output's shape not inferred
    ("MatMul", [[2, 1, 5, 64], [3, 64, 32]], [None], {}, 2 * 3 * 5 * 32 * 64),
    ("MatMulInteger", [[3, 16], [16, 4]], [[3, 4]], {}, 3 * 4 * 16),
    ("GroupQueryAttention", [[1, 10, 64], [1, 10, 16], [1, 10, 16]], [[1, 10, 64], [1, 1, 30, 16]],
     {"num_heads": 4, "kv_num_heads": 1}, 2 * 10 * 30 * 64),
    ("MultiHeadAttention", [[1, 10, 64], [1, 12, 64]], [[1, 10, 64]], {}, 2 * 10 * 12 * 64),
])
def test_formulas_with_macs(op, ins, outs, attrs, macs):
    assert node_cost(op, ins, outs, attrs)[0] == macs


def test_embedding_layer_norm_counts_per_output_element():
    assert node_cost("EmbedLayerNormalization", [[1, 8], None], [[1, 8, 16]], {}) == (0, 7 * 8 * 16)
    assert node_cost("QLinearAdd", [[4]], [[4]], {}) == (0, 4)


def _matmul_body(name: str, width: int) -> object:
    weight = numpy_helper.from_array(np.ones((width, width), np.float32), f"{name}_w")
    return helper.make_graph([helper.make_node("MatMul", ["x", weight.name], [f"{name}_y"])], name, [],
                             [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, [1, width])],
                             initializer=[weight])


def test_an_if_counts_its_larger_branch_and_says_so(tmp_path):
    small = helper.make_graph([helper.make_node("Relu", ["x"], ["small_y"])], "small", [],   # 8 FLOPs, no MACs
                              [helper.make_tensor_value_info("small_y", TensorProto.FLOAT, [1, 8])])
    node = helper.make_node("If", ["c"], ["y"], then_branch=_matmul_body("big", 8), else_branch=small)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result = model_cost(models.save(model, tmp_path / "if.onnx"))
    assert result["macs"] == 64 and result["flops"] == 128
    assert result["control_flow"][0]["note"] == "the larger branch (then_branch) counted, the other left out"


@pytest.mark.parametrize("trips, macs, lower", [(5, 5 * 64, False), (None, 64, True)])
def test_a_loop_counts_its_body_per_iteration_times_the_trip_count(tmp_path, trips, macs, lower):
    weight = numpy_helper.from_array(np.ones((8, 8), np.float32), "w")
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("MatMul", ["state", "w"], ["next"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("state", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("next", TensorProto.FLOAT, [1, 8])])
    inits = [weight, numpy_helper.from_array(np.array(True), "keep")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])]
    if trips is not None:
        inits.append(numpy_helper.from_array(np.array(trips, np.int64), "m"))
    else:
        inputs.append(helper.make_tensor_value_info("m", TensorProto.INT64, []))
    graph = helper.make_graph([helper.make_node("Loop", ["m", "keep", "x"], ["y"], body=body)], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result = model_cost(models.save(model, tmp_path / "loop.onnx"))
    assert result["macs"] == macs and result["macs_is_lower_bound"] is lower
