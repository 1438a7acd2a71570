"""The GPU suite runs only where CUDA really starts; elsewhere every test is skipped
with the reason the provider probe gives (checked once per session)."""

from __future__ import annotations

import functools

import pytest

from tests.cli.conftest import ortune  # noqa: F401  (the command-line fixture, shared)
from app.core.session.jobs import PROBE_PROVIDERS


@functools.lru_cache(maxsize=1)
def cuda_problem() -> str:
    """Why CUDA cannot be used here ("" when it can)."""
    import onnxruntime as ort

    from app.core.session.providers import installed_ort_package, nvidia_driver_present

    if not nvidia_driver_present():
        return "no NVIDIA driver (libcuda) on this machine"
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return f"this ONNX Runtime build has no CUDA provider ({installed_ort_package()})"
    from app.core.runner.process import run_job

    info = run_job(PROBE_PROVIDERS, {})
    cuda = next(p for p in info["providers"] if p["name"] == "CUDAExecutionProvider")
    return "" if cuda["available"] else cuda["reason"]


@pytest.fixture(scope="session")
def cuda():
    problem = cuda_problem()
    if problem:
        pytest.skip(f"CUDA is not usable here: {problem}")
