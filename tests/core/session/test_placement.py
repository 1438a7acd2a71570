"""Node placement on the CPU provider, and the fallback warning."""

import pytest

from app.core.session.placement import placement, summarize
from app.core.session.config import SessionConfig
from tests import models


@pytest.mark.parametrize("method", ["auto", "profiling"])
def test_every_node_on_the_cpu(tmp_path, method):
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    result = placement(str(path), SessionConfig(), method=method)
    assert result["node_count"] > 0
    assert {n["provider"] for n in result["nodes"]} == {"CPUExecutionProvider"}
    assert result["by_provider"]["CPUExecutionProvider"]["share"] == 1.0
    assert result["summary"] == f"CPU: {result['node_count']} nodes"
    assert result["warnings"] == []
    assert "Conv" in {n["op_type"] for n in result["nodes"]}


def test_a_gpu_provider_with_few_nodes_is_flagged():
    nodes = [{"name": "conv", "op_type": "Conv", "provider": "CUDAExecutionProvider"}] + [
        {"name": f"n{i}", "op_type": "Shape" if i % 2 else "Gather", "provider": "CPUExecutionProvider"}
        for i in range(5)]
    result = summarize(nodes, ["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert result["summary"] == "CUDA: 1 node, CPU: 5 nodes: Gather, Shape"
    assert len(result["warnings"]) == 1 and "17%" in result["warnings"][0]
    mostly_gpu = summarize(nodes[:1] * 9 + nodes[1:2], ["CUDAExecutionProvider"])
    assert mostly_gpu["warnings"] == []
