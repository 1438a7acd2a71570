"""Benchmark, placement and compare on a real GPU: the session really runs on CUDA,
GPU memory is measured, IO binding keeps tensors on the device, and placement shows
the CUDA share of the graph."""

import pytest

from app.core.measure.runs import RunSettings, benchmark
from app.core.session.placement import placement
from app.core.session.config import ProviderSpec, SessionConfig
from tests import models

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda")]


def cuda_config(**fields) -> SessionConfig:
    return SessionConfig(providers=[ProviderSpec("CUDAExecutionProvider")], **fields)


@pytest.fixture(scope="module")
def cnn_path(tmp_path_factory):
    return models.save(models.cnn(channels=16, size=64), tmp_path_factory.mktemp("gpu-bench") / "cnn.onnx")


@pytest.mark.parametrize("io_binding", [False, True])
def test_bench_on_cuda(cnn_path, io_binding):
    from app.core.session.machine import gpus

    report, measurement = benchmark(cnn_path, cuda_config(io_binding=io_binding),
                                    RunSettings(warmup=5, iterations=200))
    assert report["providers"][0] == "CUDAExecutionProvider"
    assert report["iterations"] == 200 and report["latency_ms"]["p50"] > 0
    if gpus():                                   # NVML answers: the process's GPU memory is known
        assert report["gpu_memory_bytes"] and report["gpu_memory_bytes"] > 0
        assert report["machine"]["gpus"]


def test_placement_on_cuda(cnn_path):
    result = placement(str(cnn_path), cuda_config())
    share = result["by_provider"]["CUDAExecutionProvider"]["share"]
    assert share >= 0.5 and result["warnings"] == []
    assert result["summary"].startswith("CUDA: ")


def test_cli_bench_on_cuda_is_stored(ortune, cnn_path):
    done = ortune("bench", cnn_path, "--provider", "cuda", "--iterations", "50", "--json")
    assert done.code == 0, done.stderr
    report = done.json()
    assert report["providers"][0] == "CUDAExecutionProvider"
    assert report["session"]["providers"][0]["name"] == "CUDAExecutionProvider"
