"""diff: a model against its fp16 variant, and against copies with planted edits."""

from __future__ import annotations

import copy

import numpy as np
from onnx import helper, numpy_helper
from onnxconverter_common import float16

from app.core.graph.jobs import DIFF
from tests import models


def _diff(tmp_path, a, b, values=True):
    path_a, path_b = models.save(a, tmp_path / "a.onnx"), models.save(b, tmp_path / "b.onnx")
    return DIFF({"a": str(path_a), "b": str(path_b), "values": values}, None)


def test_a_model_against_itself_has_no_differences(tmp_path):
    result = _diff(tmp_path, models.cnn(), models.cnn())
    assert (result["added"], result["removed"], result["changed"]) == ([], [], []) and result["matched"] == 7


def test_the_fp16_variant_adds_casts_and_changes_every_weights_dtype(tmp_path):
    source = models.cnn()
    result = _diff(tmp_path, source, float16.convert_float_to_float16(copy.deepcopy(source), keep_io_types=True))
    assert sorted(n["op_type"] for n in result["added"]) == ["Cast", "Cast"] and result["removed"] == []
    dtypes = {(c["name"], c["a"]["dtype"], c["b"]["dtype"]) for n in result["changed"] for c in n["changes"]
              if c["what"] == "initializer"}
    assert dtypes == {(w, "float", "float16") for w in ("c1.w", "c1.b", "c2.w", "c2.b", "fc.w", "fc.b")}
    assert result["graph_io"] == []            # keep_io_types: the inputs and outputs stay float


def test_planted_edits_are_each_found(tmp_path):
    source = models.cnn()
    edited = copy.deepcopy(source)
    nodes = edited.graph.node
    nodes[0].attribute[0].CopyFrom(helper.make_attribute("pads", [0, 0, 0, 0]))       # conv1: pads
    nodes[1].op_type = "Sigmoid"                                                       # relu1: operator
    for node in nodes:
        node.name = ""                                                                 # names gone: structure matches
    del nodes[4]                                                                       # gap removed ...
    nodes[4].input[0] = "r2"                                                           # ... flatten reads relu2
    weight = numpy_helper.to_array(edited.graph.initializer[2]) + 1                    # c2.w: values only
    edited.graph.initializer[2].CopyFrom(numpy_helper.from_array(weight.astype(np.float32), "c2.w"))
    result = _diff(tmp_path, source, edited)
    assert [n["op_type"] for n in result["removed"]] == ["GlobalAveragePool"] and result["added"] == []
    changes = {n["a_name"]: n["changes"] for n in result["changed"]}
    assert {"what": "attribute", "name": "pads", "a": "[1, 1, 1, 1]", "b": "[0, 0, 0, 0]"} in changes["conv1"]
    assert {"what": "op_type", "a": "Relu", "b": "Sigmoid"} in changes["relu1"]
    assert changes["flatten"] == [{"what": "inputs", "a": ["g"], "b": ["r2"]}]
    (weights,) = changes["conv2"]
    assert weights["name"] == "c2.w" and weights["a"]["dtype"] == weights["b"]["dtype"] == "float"
    assert weights["a"]["hash"] != weights["b"]["hash"]
    assert set(changes) == {"conv1", "relu1", "conv2", "flatten"}
    without_values = _diff(tmp_path, source, edited, values=False)
    assert "conv2" not in {n["a_name"] for n in without_values["changed"]}


def test_a_constant_nodes_weights_show_their_dtype_change_not_only_a_hash(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(np.ones((4, 4), np.float32), "w")),
         helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", 1, [2, 4])], [helper.make_tensor_value_info("y", 1, [2, 4])])
    source = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17)])
    result = _diff(tmp_path, source, float16.convert_float_to_float16(copy.deepcopy(source), keep_io_types=True))
    constant = next(n for n in result["changed"] if n["op_type"] == "Constant")
    change = next(c for c in constant["changes"] if c["what"] == "attribute" and c["name"] == "value")
    assert change["a"].startswith("tensor float [4, 4] #") and change["b"].startswith("tensor float16 [4, 4] #")
