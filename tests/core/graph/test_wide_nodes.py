"""A node with N inputs costs O(N) memory to inspect and to detail for the Graph tab: a Sum
of 5,000 graph inputs once took 1.8 GB (each input's hints copied the node's whole input list)."""

import tracemalloc

import pytest
from onnx import TensorProto, helper

from app.core.graph.cost import model_cost
from app.core.graph.details import node_details
from app.core.session.input_spec import FeedSpec
from tests import models


def _wide_sum(folder, n):
    inputs = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [1]) for i in range(n)]
    graph = helper.make_graph([helper.make_node("Sum", [f"x{i}" for i in range(n)], ["y"], name="sum")], "wide",
                              inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return models.save(model, folder / f"sum{n}.onnx")


def _peak(work) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("work", [lambda path: model_cost(path, FeedSpec(mode="zeros")),
                                  lambda path: node_details(path, FeedSpec(mode="zeros"), None)],
                         ids=["inspect's cost", "graph details"])
def test_four_times_the_inputs_take_about_four_times_the_memory(tmp_path, work):
    small, large = _wide_sum(tmp_path, 500), _wide_sum(tmp_path, 2000)
    work(small)                                  # imports and caches out of the way
    # linear: a ratio of about 4; quadratic, as it was: about 16
    assert _peak(lambda: work(large)) < 6 * _peak(lambda: work(small))
