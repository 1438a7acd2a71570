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


def ort_format(tmp_path):
    """The cnn saved by ONNX Runtime in its own format."""
    import onnxruntime as ort

    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "cnn.ort")
    options.add_session_config_entry("session.save_model_format", "ORT")
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    return tmp_path / "cnn.ort"


def test_an_ort_format_model_lists_its_nodes_from_a_profiled_run(tmp_path):
    result = placement(str(ort_format(tmp_path)), SessionConfig())
    assert result["method"] == "profiling" and result["node_count"] > 0
    assert {n["provider"] for n in result["nodes"]} == {"CPUExecutionProvider"}
    assert "no graph-assignment record" in result["notes"][0]


def test_the_assignment_record_of_an_ort_format_model_is_refused_with_the_reason(tmp_path):
    from app.core.jobs.errors import UserError

    with pytest.raises(UserError) as caught:
        placement(str(ort_format(tmp_path)), SessionConfig(), method="assignment")
    assert "ORT format" in caught.value.message and "profiling" in caught.value.message
