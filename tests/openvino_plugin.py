"""Whether the OpenVINO plugin package (onnxruntime-ep-openvino, a test extra) runs here, and
a fixture that skips with the reason where it cannot (no wheel for this platform, an
onnxruntime too old to load plugins, a CPU OpenVINO does not support)."""

import functools

import pytest


@functools.lru_cache(maxsize=None)
def openvino_unusable() -> str:
    """Why the plugin cannot run a session here; "" when it can."""
    try:
        import onnxruntime_ep_openvino  # noqa: F401
    except ImportError:
        return "onnxruntime-ep-openvino is not installed"
    import onnxruntime as ort

    if not hasattr(ort, "register_execution_provider_library"):
        return f"onnxruntime {ort.__version__} cannot load plugin execution providers"
    from app.core.session.openvino import NAME
    from app.core.session.plugins import ep_devices, register_all

    library = next(lib for lib in register_all() if lib.package == "onnxruntime-ep-openvino")
    if library.error:
        return f"the OpenVINO plugin does not load: {library.error}"
    if not any(d.ep_name == NAME and d.ep_metadata.get("ov_device") == "CPU" for d in ep_devices()):
        return "the OpenVINO plugin lists no CPU device on this machine"
    return ""


@pytest.fixture
def openvino_plugin():
    reason = openvino_unusable()
    if reason:
        pytest.skip(reason)
