"""Shapes computed from constants and from the input plan's shapes are folded before
inference, so what follows them is counted (PyTorch's pad chains, silero's state checks)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from app.core.graph.cost import model_cost
from tests import models


def _constant(name: str, values, dtype=np.int64):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(values, dtype), name))


def _model(nodes, inputs, initializers):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializers)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17)])


def test_a_pad_computed_from_constants_is_followed(tmp_path):
    """PyTorch's pads: [begin..., end...] made by reshaping and transposing pairs."""
    nodes = [_constant("last", [0, 4]), _constant("two", [2]), _constant("pair", [-1, 2]), _constant("flat", [-1]),
             _constant("start", [-1]), _constant("end", [-(1 << 62)]), _constant("axis", [0]), _constant("step", [-1]),
             helper.make_node("ConstantOfShape", ["two"], ["zeros"],
                              value=numpy_helper.from_array(np.array([0], np.int64))),
             helper.make_node("Concat", ["last", "zeros"], ["joined"], axis=0),
             helper.make_node("Reshape", ["joined", "pair"], ["pairs"]),
             helper.make_node("Slice", ["pairs", "start", "end", "axis", "step"], ["reversed"]),
             helper.make_node("Transpose", ["reversed"], ["by_side"], perm=[1, 0]),
             helper.make_node("Reshape", ["by_side", "flat"], ["pads"]),
             helper.make_node("Pad", ["x", "pads"], ["padded"]),
             helper.make_node("MatMul", ["padded", "w"], ["y"])]
    weight = numpy_helper.from_array(np.zeros((20, 8), np.float32), "w")
    path = models.save(_model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])], [weight]),
                       tmp_path / "padded.onnx")
    cost = model_cost(path)
    assert cost["macs"] == 20 * 8 and not cost["macs_is_lower_bound"]
    assert [r["op_type"] for r in cost["nodes"]][-2:] == ["Pad", "MatMul"]      # the model's own nodes


def test_an_if_on_the_plans_shapes_is_the_branch_it_takes(tmp_path):
    """The branches disagree on rank, so no inference merges them (ORT's symbolic one stops
    at the Conv after them): the condition (the state's size, from the plan) settles which
    one runs, as silero's state checks do."""
    then_branch = helper.make_graph([_constant("axis", [0]), helper.make_node("Unsqueeze", ["x", "axis"], ["other"])],
                                    "then", [], [helper.make_tensor_value_info("other", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph([helper.make_node("Identity", ["x"], ["chosen"])], "else", [],
                                    [helper.make_tensor_value_info("chosen", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Size", ["state"], ["size"]), _constant("zero", 0),
             helper.make_node("Equal", ["size", "zero"], ["empty"]),
             helper.make_node("If", ["empty"], ["picked"], then_branch=then_branch, else_branch=else_branch),
             helper.make_node("Conv", ["picked", "w"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16]),
              helper.make_tensor_value_info("state", TensorProto.FLOAT, ["n", 4])]
    weight = numpy_helper.from_array(np.zeros((8, 4, 3), np.float32), "w")
    path = models.save(_model(nodes, inputs, [weight]), tmp_path / "branching.onnx")
    cost = model_cost(path, free_dims={"n": 2})
    assert cost["macs"] == 14 * 8 * 4 * 3 and not cost["macs_is_lower_bound"]


def test_folding_turns_constant_chains_and_settled_ifs_into_what_they_give():
    from app.core.graph.folding import with_small_constants_folded
    from app.core.graph.shapes import fix_inputs

    then_branch = helper.make_graph([helper.make_node("Neg", ["x"], ["a"])], "then", [],
                                    [helper.make_tensor_value_info("a", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph([helper.make_node("Abs", ["x"], ["b"])], "else", [],
                                    [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Shape", ["x"], ["shape"], start=1), _constant("sixteen", [16]),
             helper.make_node("Equal", ["shape", "sixteen"], ["wide"]), helper.make_node("Squeeze", ["wide"], ["cond"]),
             helper.make_node("If", ["cond"], ["y"], then_branch=then_branch, else_branch=else_branch)]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 16])], [])
    fix_inputs(model, {"x": [2, 16]})
    folded = with_small_constants_folded(model)
    assert [n.op_type for n in folded.graph.node] == ["Constant", "Constant", "Constant", "Constant", "Neg", "Identity"]
    assert numpy_helper.to_array(folded.graph.node[3].attribute[0].t).item() is True
    assert [n.op_type for n in model.graph.node][-1] == "If"                   # the model itself is left alone
    assert with_small_constants_folded(folded) is folded                      # nothing more to fold
