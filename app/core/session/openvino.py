"""OpenVINO's provider options, checked before a run, and turned into what its plugin takes.

The classic build (onnxruntime-openvino) takes device_type, precision, num_of_threads,
num_streams, cache_dir and enable_qdq_optimizer as provider options. Its plugin
(onnxruntime-ep-openvino) takes the device from the OrtEpDevice it is given and only logs
"Provider option … is ignored" for the others, then runs with its own defaults (bf16 on a CPU
with AMX): there they become OpenVINO properties in load_config, per device."""

from __future__ import annotations

import json

from app.core.jobs.errors import UserError

NAME = "OpenVINOExecutionProvider"
#: the plugin's provider that lets OpenVINO pick the device itself
AUTO_NAME = NAME + ".AUTO"
DEVICE_TYPES = ("CPU", "GPU", "NPU", "AUTO")
PRECISIONS = ("FP32", "FP16", "BF16", "ACCURACY")
#: precision -> the OpenVINO property that asks for it
PRECISION_PROPERTIES = {"FP32": ("INFERENCE_PRECISION_HINT", "f32"), "FP16": ("INFERENCE_PRECISION_HINT", "f16"),
                        "BF16": ("INFERENCE_PRECISION_HINT", "bf16"), "ACCURACY": ("EXECUTION_MODE_HINT", "ACCURACY")}
#: option -> the OpenVINO property of the same meaning
PROPERTIES = {"num_of_threads": "INFERENCE_NUM_THREADS", "num_streams": "NUM_STREAMS", "cache_dir": "CACHE_DIR"}

#: option -> (kind, default, help), as app.core.session.config.PROVIDER_OPTIONS reads them
OPTIONS = {
    "device_type": (DEVICE_TYPES, "CPU", "Which Intel device OpenVINO runs on; AUTO lets OpenVINO pick."),
    "precision": (("",) + PRECISIONS, "", "The precision OpenVINO computes in: FP32, FP16, BF16, or ACCURACY (the "
                                          "model's own). Empty: OpenVINO's default, which is BF16 on CPUs with AMX "
                                          "and FP16 on GPUs, so outputs drift from the CPU provider's."),
    "num_of_threads": (int, 0, "Threads OpenVINO uses for inference (0: its default)."),
    "num_streams": (int, 0, "Parallel inference streams: more streams serve more requests at once; one is best for "
                            "the latency of one (0: its default)."),
    "cache_dir": (str, "", "A folder where OpenVINO keeps compiled models, so the next session starts faster."),
    "enable_qdq_optimizer": (bool, False, "NPU only: optimise a QDQ (quantised) model's graph for the NPU."),
    "load_config": (str, "", "Any other OpenVINO properties, as JSON by device: "
                             '{"CPU": {"INFERENCE_PRECISION_HINT": "f32"}}.'),
}


def read_load_config(text: str) -> dict:
    """load_config as an object of devices, each an object of properties, or one clear line."""
    if not str(text).strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UserError("bad-option", f"{NAME} option load_config is not valid JSON ({exc})") from None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise UserError("bad-option", f"{NAME} option load_config must be a JSON object of devices, each an object "
                                      'of OpenVINO properties, e.g. {"CPU": {"INFERENCE_PRECISION_HINT": "f32"}}')
    for device, properties in value.items():
        for key, item in properties.items():
            if isinstance(item, (dict, list)):
                raise UserError("bad-option", f"{NAME} option load_config: {device}.{key} must be a single value")
    return value


def check_options(options: dict) -> None:
    """What the generic check of kinds cannot see: whole numbers that must not be negative,
    and load_config's JSON."""
    for key in ("num_of_threads", "num_streams"):
        if key in options and int(options[key]) < 0:
            raise UserError("bad-option", f"{NAME} option {key} must be 0 or more, not {options[key]}")
    read_load_config(options.get("load_config", ""))


def pick_devices(ep_devices: list, options: dict) -> list:
    """The plugin's OrtEpDevices that device_type names (CPU unless said otherwise)."""
    wanted = str(options.get("device_type", "CPU")).upper()
    if wanted == "AUTO":
        chosen = [d for d in ep_devices if d.ep_name == AUTO_NAME]
    else:
        chosen = [d for d in ep_devices if d.ep_name == NAME and d.ep_metadata.get("ov_device", "") == wanted]
    if not chosen:
        have = sorted({d.ep_metadata.get("ov_device", "?") for d in ep_devices if d.ep_name == NAME})
        have += ["AUTO"] if any(d.ep_name == AUTO_NAME for d in ep_devices) else []
        raise UserError("provider-unavailable", f"OpenVINO has no {wanted} device here (it has: "
                                                f"{', '.join(have) or 'none'})")
    return chosen


def plugin_options(options: dict) -> dict[str, str]:
    """The options as the plugin takes them: everything typed goes into load_config under
    the device it is for; the user's own load_config properties win."""
    device = str(options.get("device_type", "CPU")).upper()
    properties: dict = {}
    if options.get("precision"):
        key, value = PRECISION_PROPERTIES[options["precision"]]
        properties[key] = value
    for option, key in PROPERTIES.items():
        value = options.get(option, "")
        if str(value) not in ("", "0"):
            properties[key] = str(value)
    config = {device: properties} if properties else {}
    if str(options.get("enable_qdq_optimizer", "0")).lower() in ("1", "true"):
        config.setdefault("NPU", {})["NPU_QDQ_OPTIMIZATION"] = "YES"
    for name, extra in read_load_config(options.get("load_config", "")).items():
        config.setdefault(name, {}).update({k: str(v) for k, v in extra.items()})
    return {"load_config": json.dumps(config)} if config else {}
