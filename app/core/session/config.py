"""A session setup as a plain, JSON-able preset, and how it becomes an ORT session.

The preset is what the Session panel edits, what `--config FILE` reads and what
every report's `session` object holds, so any measured setup can be reproduced."""

from __future__ import annotations

import json
import mmap
import os
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.session.input_spec import FeedSpec
from app.core.session.providers import provider_name

PRESET_SCHEMA = "ortune.session/1"
OPT_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
              "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}
EXECUTION_MODES = {"sequential": "ORT_SEQUENTIAL", "parallel": "ORT_PARALLEL"}
LOG_LEVELS = {"verbose": 0, "info": 1, "warning": 2, "error": 3, "fatal": 4}

#: provider -> {option: (kind, default, help)}; kind is bool, int, str or a tuple of choices
PROVIDER_OPTIONS: dict[str, dict[str, tuple]] = {
    "CPUExecutionProvider": {},
    "CUDAExecutionProvider": {
        "device_id": (int, 0, "Which GPU to use, counting from 0."),
        "cudnn_conv_algo_search": (("EXHAUSTIVE", "HEURISTIC", "DEFAULT"), "EXHAUSTIVE",
                                   "How cuDNN picks convolution algorithms: exhaustive timing is best "
                                   "for fixed shapes, heuristic starts faster."),
        "gpu_mem_limit": (int, 0, "Cap on the memory arena in bytes (0: no cap)."),
        "arena_extend_strategy": (("kNextPowerOfTwo", "kSameAsRequested"), "kNextPowerOfTwo",
                                  "How the arena grows: doubling wastes memory, exact size grows more often."),
        "do_copy_in_default_stream": (bool, True, "Copy on the compute stream (safe); off allows overlap."),
        "enable_cuda_graph": (bool, False, "Capture the run as a CUDA graph and replay it; needs IO binding "
                                           "with fixed addresses and shapes."),
        "use_tf32": (bool, True, "Allow TF32 math on Ampere and newer (faster, slightly less precise)."),
    },
    "TensorrtExecutionProvider": {
        "device_id": (int, 0, "Which GPU to use."),
        "trt_fp16_enable": (bool, False, "Let TensorRT build fp16 kernels."),
        "trt_int8_enable": (bool, False, "Let TensorRT build int8 kernels (needs a QDQ model or calibration)."),
        "trt_engine_cache_enable": (bool, False, "Keep built engines on disk so the next start is fast."),
        "trt_engine_cache_path": (str, "", "Folder for cached engines."),
        "trt_max_workspace_size": (int, 0, "Scratch memory TensorRT may use while building, in bytes "
                                           "(0: its default)."),
    },
    "DmlExecutionProvider": {
        "device_id": (int, 0, "Which DirectX 12 adapter to use."),
    },
    "OpenVINOExecutionProvider": {
        "device_type": (("CPU", "GPU", "NPU", "AUTO"), "CPU", "Which Intel device OpenVINO runs on."),
    },
}


#: typed SessionConfig fields that reach ORT as session config entries
TYPED_ENTRIES = {
    "intra_op_allow_spinning": "session.intra_op.allow_spinning",
    "inter_op_allow_spinning": "session.inter_op.allow_spinning",
    "intra_op_spin_duration_us": "session.intra_op.spin_duration_us",
    "inter_op_spin_duration_us": "session.inter_op.spin_duration_us",
    "intra_op_spin_backoff_max": "session.intra_op.spin_backoff_max",
    "inter_op_spin_backoff_max": "session.inter_op.spin_backoff_max",
    "dynamic_block_base": "session.dynamic_block_base",
    "intra_op_thread_affinities": "session.intra_op_thread_affinities",
}


@dataclass
class ProviderSpec:
    name: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass
class SessionConfig:
    providers: list[ProviderSpec] = field(default_factory=lambda: [ProviderSpec("CPUExecutionProvider")])
    graph_optimization_level: str = "all"
    execution_mode: str = "sequential"
    intra_op_num_threads: int = 0        # 0: ORT's default (one per physical core)
    inter_op_num_threads: int = 0
    intra_op_thread_affinities: str = ""
    intra_op_allow_spinning: bool | None = None   # None: ORT's default (spin)
    inter_op_allow_spinning: bool | None = None
    intra_op_spin_duration_us: int | None = None
    inter_op_spin_duration_us: int | None = None
    intra_op_spin_backoff_max: int | None = None
    inter_op_spin_backoff_max: int | None = None
    dynamic_block_base: int = 0
    enable_mem_pattern: bool = True
    enable_cpu_mem_arena: bool = True
    use_deterministic_compute: bool = False
    log_severity_level: int = 3
    free_dimension_overrides: dict[str, int] = field(default_factory=dict)
    config_entries: dict[str, str] = field(default_factory=dict)
    io_binding: bool = False
    inputs: FeedSpec = field(default_factory=FeedSpec)

    # presets ---------------------------------------------------------------
    def to_dict(self) -> dict:
        data = asdict(self)
        data["inputs"] = self.inputs.to_dict()
        return {"schema": PRESET_SCHEMA, **data}

    @classmethod
    def from_dict(cls, data: dict) -> "SessionConfig":
        if not isinstance(data, dict):
            raise UserError("bad-config", "a session preset must be a JSON object")
        data = dict(data)
        schema = data.pop("schema", PRESET_SCHEMA)
        if schema != PRESET_SCHEMA:
            raise UserError("bad-config", f"unknown preset schema {schema!r} (expected {PRESET_SCHEMA})")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise UserError("bad-config", f"unknown session setting(s): {', '.join(sorted(unknown))}")
        providers = []
        for item in data.pop("providers", None) or [{"name": "CPUExecutionProvider"}]:
            if isinstance(item, str):
                item = {"name": item}
            providers.append(ProviderSpec(provider_name(item.get("name", "")),
                                          {str(k): str(v) for k, v in (item.get("options") or {}).items()}))
        inputs = FeedSpec.from_dict(data.pop("inputs", None))
        try:
            config = cls(providers=providers, inputs=inputs, **data)
        except TypeError as exc:
            raise UserError("bad-config", f"invalid session preset: {exc}") from None
        config.validate()
        return config

    @classmethod
    def load(cls, path: str | os.PathLike) -> "SessionConfig":
        path = Path(path)
        try:
            return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except OSError as exc:
            raise UserError("not-found", f"{path}: cannot read the preset ({exc.strerror})") from None
        except ValueError as exc:
            raise UserError("bad-config", f"{path.name}: not valid JSON ({exc})") from None

    def save(self, path: str | os.PathLike) -> None:
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2), encoding="utf-8")
        os.replace(tmp, path)

    def validate(self) -> None:
        if self.graph_optimization_level not in OPT_LEVELS:
            raise UserError("bad-option", f"optimisation level must be one of {', '.join(OPT_LEVELS)}, "
                                          f"not {self.graph_optimization_level!r}")
        if self.execution_mode not in EXECUTION_MODES:
            raise UserError("bad-option", f"execution mode must be sequential or parallel, not {self.execution_mode!r}")
        for name in ("intra_op_num_threads", "inter_op_num_threads", "dynamic_block_base"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise UserError("bad-option", f"{name} must be a whole number ≥ 0, not {value!r}")
        for name, minimum in (("intra_op_spin_duration_us", 0), ("inter_op_spin_duration_us", 0),
                              ("intra_op_spin_backoff_max", 1), ("inter_op_spin_backoff_max", 1)):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < minimum):
                raise UserError("bad-option", f"{name} must be a whole number ≥ {minimum} or unset, not {value!r}")
        for name in ("intra_op_allow_spinning", "inter_op_allow_spinning"):
            if getattr(self, name) not in (None, True, False):
                raise UserError("bad-option", f"{name} must be true, false or unset, not {getattr(self, name)!r}")
        if self.log_severity_level not in LOG_LEVELS.values():
            raise UserError("bad-option", "log severity must be 0 (verbose) to 4 (fatal)")
        if not self.providers:
            raise UserError("bad-option", "at least one execution provider is needed")
        for spec in self.providers:
            schema = PROVIDER_OPTIONS.get(spec.name)
            if schema is None:
                continue
            for key, value in spec.options.items():
                if key not in schema:
                    raise UserError("bad-option", f"{spec.name} has no option {key!r} "
                                                  f"(it has: {', '.join(schema) or 'none'})")
                kind = schema[key][0]
                if isinstance(kind, tuple) and value not in kind:
                    raise UserError("bad-option", f"{spec.name} option {key} must be one of {', '.join(kind)}")
                if kind is int and not str(value).lstrip("-").isdigit():
                    raise UserError("bad-option", f"{spec.name} option {key} must be a whole number, not {value!r}")
                if kind is bool and str(value).lower() not in ("0", "1", "true", "false"):
                    raise UserError("bad-option", f"{spec.name} option {key} must be 0/1 or true/false")
        for name, value in self.free_dimension_overrides.items():
            if not isinstance(value, int) or value < 1:
                raise UserError("bad-option", f"free dimension override {name} must be ≥ 1, not {value!r}")
        self.inputs.validate()

    # what reaches ORT -------------------------------------------------------
    def all_config_entries(self) -> dict[str, str]:
        """The typed fields as ORT session config keys, plus the free-form entries."""
        entries: dict[str, str] = {}
        for name, key in TYPED_ENTRIES.items():
            value = getattr(self, name)
            if name == "intra_op_thread_affinities":
                if value:
                    entries[key] = value
            elif name == "dynamic_block_base":
                if value:
                    entries[key] = str(value)
            elif value is not None:
                entries[key] = str(int(value))
        entries.update(self.config_entries)
        return entries

    def provider_names(self) -> list[str]:
        return [p.name for p in self.providers]


@lru_cache(maxsize=None)
def supported_config_keys() -> frozenset[str]:
    """Session config keys this ORT binary knows (read from the library's strings)."""
    import onnxruntime as ort

    keys = set()
    folder = Path(ort.__file__).parent / "capi"
    candidates = [p for p in folder.iterdir() if ("onnxruntime" in p.name and
                  (".so" in p.name or p.suffix in (".dll", ".pyd", ".dylib")) and "providers" not in p.name)]
    for library in candidates:
        try:
            with open(library, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                start = 0
                while True:
                    index = data.find(b"session.", start)
                    if index < 0:
                        break
                    end = index
                    while end < len(data) and end - index < 100 and (chr(data[end]).isalnum() or data[end] in b"._"):
                        end += 1
                    keys.add(data[index:end].decode("ascii", "replace"))
                    start = end
        except (OSError, ValueError):
            continue
    return frozenset(keys)
