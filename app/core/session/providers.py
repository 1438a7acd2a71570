"""Which execution providers this ORT build has, and which really start here.

`get_available_providers()` only says what the build was compiled with: an
onnxruntime-gpu wheel lists CUDA and TensorRT on a machine without CUDA libraries, and
a session asked for CUDA then silently runs on the CPU. So every listed provider is
tried on a tiny model while ORT's log is captured, and `get_providers()` of that
session is the proof. The probe can crash in native code: run it in a child process.
"""

from __future__ import annotations

import ctypes
import platform
import re
import sys

from app.core.jobs.protocol import JobContext
from app.core.jobs.stdio import capture_output

# short name used on the command line -> ORT's provider name
SHORT_NAMES = {
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
    "dml": "DmlExecutionProvider",
    "openvino": "OpenVINOExecutionProvider",
    "coreml": "CoreMLExecutionProvider",
    "rocm": "ROCMExecutionProvider",
    "migraphx": "MIGraphXExecutionProvider",
    "qnn": "QNNExecutionProvider",
    "xnnpack": "XnnpackExecutionProvider",
    "webgpu": "WebGpuExecutionProvider",
}
LONG_TO_SHORT = {v: k for k, v in SHORT_NAMES.items()}
#: the providers always listed, available or not, so the user learns how to get them
FEATURED = ["CPUExecutionProvider", "CUDAExecutionProvider", "TensorrtExecutionProvider",
            "DmlExecutionProvider", "OpenVINOExecutionProvider"]
ORT_PACKAGES = ["onnxruntime-gpu", "onnxruntime-directml", "onnxruntime-openvino",
                "onnxruntime-qnn", "onnxruntime"]
GPU_PROVIDERS = {"CUDAExecutionProvider", "TensorrtExecutionProvider", "DmlExecutionProvider",
                 "ROCMExecutionProvider", "MIGraphXExecutionProvider", "WebGpuExecutionProvider"}


def provider_name(text: str) -> str:
    """Accept 'cuda', 'CUDA' or 'CUDAExecutionProvider'; return ORT's name (or the text)."""
    key = text.strip()
    return SHORT_NAMES.get(key.lower(), key)


def installed_ort_package() -> str:
    import importlib.metadata  # on first use: it costs a job process 20 ms to import

    for name in ORT_PACKAGES:
        try:
            return f"{name} {importlib.metadata.version(name)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return "onnxruntime (unknown package)"


def nvidia_driver_present() -> bool:
    names = ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so"]
    for name in names:
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


def not_in_build_reason(name: str, package: str) -> str:
    os_name = platform.system()
    if name == "DmlExecutionProvider":
        if os_name != "Windows":
            return "DirectML runs only on Windows, with the onnxruntime-directml package."
        return f"This installation has {package}; DirectML needs the onnxruntime-directml package instead."
    if name == "CUDAExecutionProvider":
        return (f"This installation has {package}, built without CUDA; CUDA needs the onnxruntime-gpu package, "
                "an NVIDIA driver and the CUDA and cuDNN libraries.")
    if name == "TensorrtExecutionProvider":
        return (f"This installation has {package}, built without TensorRT; TensorRT needs the onnxruntime-gpu "
                "package, an NVIDIA GPU and the TensorRT libraries.")
    if name == "OpenVINOExecutionProvider":
        return (f"This installation has {package} and no OpenVINO plugin; OpenVINO needs the plugin package "
                "onnxruntime-ep-openvino (pip install onnxruntime-ep-openvino) or the onnxruntime-openvino build, "
                "and an Intel device.")
    if name == "CoreMLExecutionProvider":
        return "CoreML runs only on macOS and iOS."
    return f"Not part of this ONNX Runtime build ({package})."


_LIB_RE = re.compile(r"Failed to load library (\S+) with error: ([^\n]+?)(?:\x1b|\n|$)")
_REQUIRE_RE = re.compile(r"Require ([^.\n]*(?:\.\*)?(?: and [^.\n]*\.\*)?)")


def explain_failed_start(name: str, log: str, error: str = "") -> str:
    """One sentence saying why a provider in the build did not start, from ORT's own log."""
    short = {"CUDAExecutionProvider": "CUDA", "TensorrtExecutionProvider": "TensorRT"}.get(name, name)
    details = []
    match = _LIB_RE.search(log)
    if match:
        missing = re.search(r"(lib[\w.+-]+\.so[\w.]*|[\w.-]+\.dll)", match.group(2))
        details.append(f"the library {missing.group(1) if missing else match.group(2).strip()} could not be loaded")
    requirement = _REQUIRE_RE.search(log)
    if name in ("CUDAExecutionProvider", "TensorrtExecutionProvider") and not nvidia_driver_present():
        details.insert(0, "no NVIDIA driver was found (libcuda is missing)")
    if name == "TensorrtExecutionProvider" and ("TensorRT" in log or "nvinfer" in log or "TensorRT" in error):
        details.append("the TensorRT libraries are not installed or not on the library path")
    if not details and error:
        details.append(error.strip().splitlines()[0][:200])
    if not details:
        details.append("the session fell back to the CPU without saying why")
    sentence = f"{short} is in this build but cannot start here: " + "; ".join(details)
    if requirement:
        sentence += f" (this build needs {requirement.group(1).strip()})"
    return sentence + "."


def _tiny_model_bytes() -> bytes:
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"])], "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model.SerializeToString()


_preloaded = False


def preload_cuda_libraries() -> None:
    """Load CUDA/cuDNN from the nvidia-* wheels when they are installed (pip install
    onnxruntime-gpu[cuda,cudnn]); without this ORT only finds system-wide libraries."""
    global _preloaded
    import onnxruntime as ort

    if _preloaded or not hasattr(ort, "preload_dlls"):
        return
    _preloaded = True
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return
    with capture_output():
        try:
            ort.preload_dlls()
        except Exception:  # missing libraries are reported later, by the provider that needs them
            pass


def try_provider(name: str, model_bytes: bytes) -> tuple[bool, str]:
    """Start a session on `name`; (True, "") if it really runs there, else (False, why)."""
    import numpy as np
    import onnxruntime as ort

    if name in ("CUDAExecutionProvider", "TensorrtExecutionProvider"):
        preload_cuda_libraries()
    options = ort.SessionOptions()
    options.log_severity_level = 2
    error = ""
    with capture_output() as captured:
        try:
            session = ort.InferenceSession(model_bytes, options, providers=[name, "CPUExecutionProvider"])
            session.run(None, {"x": np.ones((1, 4), np.float32)})
            used = session.get_providers()
        except Exception as exc:  # ORT raises plain RuntimeError/Fail for a provider that cannot start
            used, error = [], str(exc)
    if name in used:
        return True, ""
    return False, explain_failed_start(name, captured.text, error)


def try_plugin(name: str, model_bytes: bytes) -> tuple[bool, str]:
    """Start a session on a plugin provider's devices; (True, "") if it runs there, else (False, why)."""
    import numpy as np
    import onnxruntime as ort

    from app.core.session.plugins import ep_devices

    devices = [d for d in ep_devices() if d.ep_name == name]
    if not devices:
        return False, f"{name} is loaded but lists no device on this machine."
    options = ort.SessionOptions()
    options.log_severity_level = 2
    with capture_output() as captured:
        try:
            options.add_provider_for_devices(devices, {})
            session = ort.InferenceSession(model_bytes, options)
            session.run(None, {"x": np.ones((1, 4), np.float32)})
            used = session.get_providers()
        except Exception as exc:  # a plugin raises ORT's plain errors too
            return False, explain_failed_start(name, captured.text, str(exc))
    return (True, "") if name in used else (False, explain_failed_start(name, captured.text))


def list_devices(usable: dict[str, tuple[bool, str]] | None = None) -> list[dict]:
    """Hardware devices as ORT's device-enumeration API (1.22+) reports them, each with
    whether its provider starts here (from `usable`: provider -> (available, reason))."""
    from app.core.session.plugins import describe_device, ep_devices

    usable = usable or {}
    devices = []
    try:
        for ep_device in ep_devices():
            item = describe_device(ep_device)
            available, reason = usable.get(item["provider"], (True, ""))
            devices.append({**item, "available": available, "reason": reason})
    except Exception:  # an old or partial API: enumeration is a bonus, never a failure
        return devices
    return devices


def probe_providers(ctx: JobContext | None = None, libraries: dict[str, str] | None = None) -> dict:
    """Every provider of the build and of the plugins installed (or named in `libraries`),
    tried here; the plugins and the devices each provider lists."""
    import onnxruntime as ort

    from app.core.jobs.errors import UserError
    from app.core.session.plugins import PluginLibrary, classic_providers, register, registered_for, \
        installed_packages, named_library

    ctx = ctx or JobContext()
    package = installed_ort_package()
    in_build = list(classic_providers())
    plugins = []
    for library in installed_packages():
        plugins.append(register(library))
    for name, path in (libraries or {}).items():
        try:
            plugins.append(register(named_library(name, path)))
        except UserError as exc:
            plugins.append(PluginLibrary(name, path, error=exc.message))
    plugged = [name for library in plugins if not library.error for name in library.ep_names]
    names = list(dict.fromkeys(FEATURED + in_build + plugged))
    model_bytes = _tiny_model_bytes()
    providers, usable = [], {}
    for index, name in enumerate(names):
        ctx.check_cancel()
        ctx.progress(index / len(names), f"trying {name}")
        library = registered_for(name)
        if name not in in_build and library is None:
            available, reason = False, not_in_build_reason(name, package)
        elif name == "CPUExecutionProvider":
            available, reason = True, ""
        elif library is not None:
            available, reason = try_plugin(name, model_bytes)
        else:
            available, reason = try_provider(name, model_bytes)
        usable[name] = (available, reason)
        base, dot, variant = name.partition(".")       # a plugin's variant of a provider (OpenVINO's .AUTO)
        short = LONG_TO_SHORT.get(name) or (f"{LONG_TO_SHORT[base]}.{variant.lower()}" if dot and base in LONG_TO_SHORT
                                            else name)
        providers.append({"name": name, "short": short, "in_build": name in in_build,
                          "plugin": library.source() if library else None,
                          "available": available, "reason": reason, "gpu": name in GPU_PROVIDERS})
    ctx.progress(1.0, "done")
    return {"ort_version": ort.__version__, "package": package, "platform": platform.platform(),
            "providers": providers, "plugins": [library.to_dict() for library in plugins],
            "devices": list_devices(usable)}
