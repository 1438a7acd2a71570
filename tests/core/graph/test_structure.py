"""The drawn structure: ids, closed and open control-flow bodies, the arrows between what
is drawn, and search."""

from __future__ import annotations

from app.core.graph.structure import arrows, read_structure, search, visible
from tests import models


def _pairs(structure, expanded):
    shown = visible(structure, expanded)
    return {(a["tail"], a["head"], a["kind"]): a["tensors"] for a in arrows(structure, shown, expanded)}, shown


def test_a_plain_graph_has_its_inputs_nodes_and_outputs_joined_by_tensor():
    structure = read_structure(models.cnn())
    ids = [n["id"] for n in structure["nodes"]]
    assert ids == ["in:x", "0", "1", "2", "3", "4", "5", "6", "out:y"]       # initializers are not drawn
    pairs, _ = _pairs(structure, set())
    assert pairs[("in:x", "0", "data")] == ["x"]
    assert pairs[("0", "1", "data")] == ["c1"]
    assert pairs[("6", "out:y", "data")] == ["y"]
    assert len(pairs) == 8


def test_a_closed_if_stands_for_its_bodies_and_an_open_one_shows_them():
    structure = read_structure(models.with_if_subgraph())
    branch = next(n for n in structure["nodes"] if n["op_type"] == "If")
    assert sorted(branch["bodies"]) == ["3/else_branch/", "3/then_branch/"]
    pairs, shown = _pairs(structure, set())
    assert {n["name"] for n in shown} == {"x", "sum", "zero", "gt", "branch", "y"}
    assert pairs[("in:x", "3", "data")] == ["x"], "the bodies read x: it arrives at the closed If"
    pairs, shown = _pairs(structure, {"3"})
    names = {n["name"] for n in shown}
    assert {"then_relu", "else_neg", "else_abs"} <= names
    relu = next(n["id"] for n in shown if n["name"] == "then_relu")
    neg = next(n["id"] for n in shown if n["name"] == "else_neg")
    assert pairs[("in:x", relu, "data")] == ["x"] and ("in:x", "3", "data") not in pairs
    assert ("3", relu, "body") in pairs and ("3", neg, "body") in pairs
    assert pairs[(neg, next(n["id"] for n in shown if n["name"] == "else_abs"), "data")] == ["e"]


def test_search_finds_names_then_operators_then_tensors_in_graph_order():
    nodes = read_structure(models.cnn())["nodes"]
    assert search(nodes, "RELU") == ["1", "3"]
    assert search(nodes, "gemm") == ["6"]
    assert search(nodes, "c2") == ["2", "3"], "conv2 by name, then relu2 that reads tensor c2"
    assert search(nodes, "  ") == []
