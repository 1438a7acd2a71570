"""The GPU plugin execution providers (onnxruntime-ep-nv-tensorrt-rtx), where the device
check installed one: found and registered, listed by `ortune devices` with its device, and a
benchmark and a comparison run on it. Skipped with the reason where no such package is
installed, its library does not load, or it lists no device."""

from __future__ import annotations

import functools

import pytest

from tests import models

PACKAGE = "onnxruntime-ep-nv-tensorrt-rtx"


@functools.lru_cache(maxsize=1)
def gpu_plugin() -> tuple[str, str]:
    """(its provider name, "") where a GPU plugin runs here, else ("", why not)."""
    import onnxruntime as ort

    if not hasattr(ort, "register_execution_provider_library"):
        return "", f"onnxruntime {ort.__version__} cannot load plugin execution providers"
    from app.core.session.plugins import ep_devices, register_all

    library = next((lib for lib in register_all() if lib.package.startswith(PACKAGE)), None)
    if library is None:
        return "", f"{PACKAGE} is not installed"
    if library.error or not library.ep_names:
        return "", f"{library.package} does not load: {library.error or 'it names no provider'}"
    name = library.ep_names[0]
    if not any(device.ep_name == name for device in ep_devices()):
        return "", f"{name} lists no device on this machine"
    return name, ""


@pytest.fixture(scope="module")
def plugin_provider():
    name, why = gpu_plugin()
    if not name:
        pytest.skip(why)
    return name


def test_devices_lists_the_gpu_plugin_with_its_device(ortune, plugin_provider):
    done = ortune("devices", "--json")
    assert done.code == 0, done.stderr
    result = done.json()
    row = next(p for p in result["providers"] if p["name"] == plugin_provider)
    assert row["available"], row["reason"]
    assert row["plugin"]["package"].startswith(PACKAGE)
    assert any(d["provider"] == plugin_provider and d["type"] == "GPU" for d in result["devices"])


def test_bench_and_compare_run_on_the_gpu_plugin(ortune, tmp_path, plugin_provider):
    model = models.save(models.cnn(channels=16, size=64), tmp_path / "cnn.onnx")
    done = ortune("bench", model, "--provider", plugin_provider, "--iterations", "50", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["providers"][0] == plugin_provider
    variant = models.save(models.cnn(channels=16, size=64), tmp_path / "same.onnx")
    compared = ortune("compare", model, variant, "--provider", plugin_provider, "--duration", "0.5", "--pairs", "1",
                      "--max-seconds", "5", "--no-history", "--json")
    assert compared.code == 0, compared.stderr
    rows = compared.json()["models"]
    assert len(rows) == 2 and rows[1]["fidelity"]["passed"], "the same model on the same provider gives the same answers"
