"""The ways of feeding a model that the IO Binding demo compares, as a plain plan.

Nothing here touches ONNX Runtime. For a provider it says which modes exist (and
why one is skipped), the device name that OrtValues and bindings use ("cpu",
"cuda", "dml"), the provider options each mode's session needs, and how many bytes
each mode moves between host and device memory on every run. CUDA and DirectML use
the same ORT calls with a different device name, so they share this plan and the
code that carries it out; only CUDA graphs are CUDA's own.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from app.core.jobs.errors import UserError
from app.core.session.providers import LONG_TO_SHORT, provider_name
from app.core.session.config import ProviderSpec, SessionConfig

DEFAULT_ITERATIONS = 100
DEFAULT_WARMUP = 10

#: ORT provider -> the device name of OrtValue.ortvalue_from_numpy and IOBinding.bind_output
DEVICES = {"CPUExecutionProvider": "cpu", "CUDAExecutionProvider": "cuda", "DmlExecutionProvider": "dml"}
GRAPH_OPTION = "enable_cuda_graph"
#: ORT runs a few ordinary runs before it captures a CUDA graph; warm up past them
GRAPH_WARMUP = 3

# where the inputs come from / where the outputs go
NUMPY, BIND_EACH_RUN, DEVICE_ONCE = "numpy", "bind-each-run", "device-once"
DEVICE, PREALLOCATED = "device", "preallocated"

_MODES = [
    ("plain", "Plain run", NUMPY, NUMPY,
     "session.run() with numpy arrays in and out. On a GPU, ONNX Runtime copies every input to the device "
     "before the run and every output back to the host after it, on every run, and those copies are part "
     "of the time you measure."),
    ("bind-inputs-each-run", "Bind inputs each run", BIND_EACH_RUN, DEVICE,
     "IO binding: the numpy inputs are bound again before every run (binding copies them to the device, as "
     "a new frame or batch would be), and the outputs are bound to the device, so nothing comes back to "
     "the host unless you ask for it."),
    ("device-inputs", "Inputs on the device", DEVICE_ONCE, DEVICE,
     "The inputs are placed on the device once with OrtValue.ortvalue_from_numpy(x, device) and bound; the "
     "outputs are bound to the device. The loop moves no data between host and device: what remains is "
     "the model's own time."),
    ("preallocated-outputs", "Preallocated outputs", DEVICE_ONCE, PREALLOCATED,
     "As before, but every output is an OrtValue allocated once on the device, and ONNX Runtime writes into "
     "it on every run. Its address never changes, which CUDA graphs need and which lets the result feed "
     "the next model without a copy."),
    ("cuda-graph", "CUDA graph", DEVICE_ONCE, PREALLOCATED,
     "As before, with enable_cuda_graph=1: ONNX Runtime records the whole run as a CUDA graph once and "
     "then replays it, which saves the CPU time of launching every kernel. It needs fixed shapes, fixed "
     "input and output addresses, and every node on the CUDA provider."),
]

PROVIDER_NOTES = {
    "cpu": ("On the CPU the device memory is host memory: no mode copies anything between memories, so the "
            "modes differ only by their own bookkeeping (binding, allocating outputs: microseconds per run). "
            "On a tiny model that can make binding look slower; on a real model it is noise. The same "
            "comparison on a GPU shows what the copies cost."),
    "cuda": ("Every latency includes waiting for the GPU to finish: ONNX Runtime synchronises at the end of each "
             "run. The copy cost is the bytes a mode moves per run at the host-to-device and device-to-host "
             "rates measured here with the same arrays."),
    "dml": ("DirectML uses the same calls as CUDA with the device name \"dml\". ORTune's DirectML path shares "
            "its code with the CUDA path and its configuration is tested, but it has not yet been seen to run "
            "on a Windows machine: treat its numbers as a first look."),
}


@dataclass(frozen=True)
class ModePlan:
    name: str
    title: str
    inputs: str                 # NUMPY, BIND_EACH_RUN or DEVICE_ONCE
    outputs: str                # NUMPY, DEVICE or PREALLOCATED
    device: str                 # "cpu", "cuda" or "dml"
    device_id: int
    explanation: str
    available: bool = True
    skipped_reason: str = ""
    provider_options: dict[str, str] = field(default_factory=dict)
    min_warmup: int = 0

    @property
    def binds(self) -> bool:
        return self.inputs != NUMPY

    def to_dict(self) -> dict:
        return asdict(self)


def device_name(provider: str) -> str:
    """"cpu", "cuda" or "dml" for a provider; a UserError for providers the demo does not cover."""
    name = provider_name(provider)
    if name not in DEVICES:
        short = LONG_TO_SHORT.get(name, provider)
        raise UserError("bad-option", f"the IO binding demo runs on cpu, cuda or dml, not {short}")
    return DEVICES[name]


def plan_modes(provider: str, device_id: int = 0) -> list[ModePlan]:
    """The modes, in order, for a provider: each one available, or skipped with the reason."""
    device = device_name(provider)
    plans = []
    for name, title, inputs, outputs, explanation in _MODES:
        extra: dict[str, str] = {}
        available, reason, warmup = True, "", 0
        if name == "cuda-graph":
            if device == "cuda":
                extra, warmup = {GRAPH_OPTION: "1"}, GRAPH_WARMUP
            else:
                available = False
                reason = "CUDA graphs are a feature of the CUDA provider; pick CUDA to see this mode."
        plans.append(ModePlan(name, title, inputs, outputs, device, device_id, explanation, available, reason,
                              extra, warmup))
    return plans


def device_id_of(config: SessionConfig, provider: str) -> int:
    """The device_id option the preset gives this provider (0 when it gives none)."""
    name = provider_name(provider)
    spec = next((p for p in config.providers if p.name == name), None)
    value = (spec.options if spec else {}).get("device_id", "0")
    return int(value)


def session_config_for(base: SessionConfig, provider: str, plan: ModePlan) -> SessionConfig:
    """The preset for a mode's session: the user's preset on this one provider, with the mode's options.

    The user's own enable_cuda_graph is dropped for the ordinary modes (a captured graph
    replays fixed addresses, which a plain run() does not keep). DirectML needs memory
    patterns off and sequential execution."""
    name = provider_name(provider)
    config = base.checked()
    spec = next((p for p in config.providers if p.name == name), None)
    options = {k: v for k, v in (spec.options if spec else {}).items() if k != GRAPH_OPTION}
    options.update(plan.provider_options)
    config.providers = [ProviderSpec(name, options)]
    config.io_binding = plan.binds
    if plan.device == "dml":
        config.enable_mem_pattern = False
        config.execution_mode = "sequential"
    config.validate()
    return config


def bytes_per_run(plan: ModePlan, input_bytes: int, output_bytes: int) -> tuple[int, int]:
    """(bytes to the device, bytes back to the host) a mode moves on every run."""
    if plan.device == "cpu":
        return 0, 0
    to_device = input_bytes if plan.inputs in (NUMPY, BIND_EACH_RUN) else 0
    to_host = output_bytes if plan.outputs == NUMPY else 0
    return to_device, to_host


def copy_ms(to_device: int, to_host: int, transfer: dict | None) -> float | None:
    """What moving those bytes costs at the measured rates (None when a needed rate is unknown)."""
    if not to_device and not to_host:
        return 0.0
    if not transfer:
        return None
    total = 0.0
    for count, key in ((to_device, "to_device_bytes_per_s"), (to_host, "to_host_bytes_per_s")):
        if count:
            rate = transfer.get(key)
            if not rate:
                return None
            total += 1000.0 * count / rate
    return total


def provider_note(provider: str) -> str:
    return PROVIDER_NOTES[device_name(provider)]
