"""A session setup as a plain, JSON-able preset, and how it becomes an ORT session.

The preset is what the Session panel edits, what `--config FILE` reads and what
every report's `session` object holds, so any measured setup can be reproduced."""

from __future__ import annotations

import json
import mmap
import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.session.fields import FIELD, OPT_LEVELS, SESSION_FIELDS, described, from_table  # noqa: F401 (OPT_LEVELS: the session's names)
from app.core.session import openvino
from app.core.session.input_spec import FeedSpec
from app.core.session.providers import provider_name

PRESET_SCHEMA = "ortune.session/1"

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
    openvino.NAME: openvino.OPTIONS,
}


@dataclass
class ProviderSpec(Params):
    name: str
    options: dict[str, Any] = setting(factory=dict)
    #: where a plugin provider came from: {"package", "version"} or {"library": path}
    plugin: dict[str, str] = setting(factory=dict)

    def to_dict(self) -> dict:
        data = super().to_dict()
        if not self.plugin:
            del data["plugin"]       # a classic provider's preset stays as it was
        return data

    def validate(self) -> None:
        self.name = provider_name(self.name)
        for key, value in self.options.items():
            if value is None or isinstance(value, (dict, list)):
                raise UserError("bad-option", f"{self.name} option {key} must be a single value")
        self.options = {key: str(value) for key, value in self.options.items()}


@from_table()
class SessionConfig(Params):
    """A field for each setting of app.core.session.fields, in its order, with its type, default,
    range, choices and flag; the inputs' settings are FeedSpec's."""

    providers: list[ProviderSpec] = described(
        "providers", factory=lambda: [ProviderSpec(name) for name in FIELD["providers"].factory()])
    inputs: FeedSpec = setting(factory=FeedSpec)    # its fields are described one by one ("inputs.seed")

    # presets ---------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"schema": PRESET_SCHEMA, **super().to_dict()}

    @classmethod
    def from_dict(cls, data: Any = None, *, text: bool = False, prefix: str = "") -> "SessionConfig":
        if data is None:
            data = {}
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise UserError("bad-config", f"{prefix.rstrip('.') or 'a session preset'} must be a JSON object")
        data = dict(data)
        schema = data.pop("schema", PRESET_SCHEMA)
        if schema != PRESET_SCHEMA:
            raise UserError("bad-config", f"unknown preset schema {schema!r} (expected {PRESET_SCHEMA})")
        providers = data.get("providers")
        if not providers and "providers" in data:
            del data["providers"]                      # none given: the CPU, as by default
        elif isinstance(providers, list):
            data["providers"] = [{"name": item} if isinstance(item, str) else item for item in providers]
        return super().from_dict(data, text=text, prefix=prefix)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "SessionConfig":
        path = Path(path)
        if path.exists() and not path.is_file():
            raise UserError("bad-config", f"{path}: a preset is a JSON file, and this is not a regular file")
        try:
            return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except OSError as exc:
            raise UserError("not-found", f"{path}: cannot read the preset ({exc.strerror})") from None
        except RecursionError:
            raise UserError("bad-config", f"{path.name}: nested too deeply to be a preset") from None
        except ValueError as exc:
            raise UserError("bad-config", f"{path.name}: not valid JSON ({exc})") from None

    def save(self, path: str | os.PathLike) -> None:
        """Write the preset through a private temporary file renamed into place; a file there
        is replaced, but never a folder, FIFO or device (see check_preset_target)."""
        from app.core.model.output import file_mode, is_disk_full, no_space

        path = Path(path).absolute()
        check_preset_target(path)
        try:
            handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except OSError as exc:
            raise UserError("not-writable", f"{path}: cannot write the preset ({exc.strerror})") from None
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(json.dumps(self.to_dict(), indent=2))
            os.chmod(temporary, file_mode())     # mkstemp's file is private; a preset is not
            check_preset_target(path)            # nothing else took the name meanwhile
            os.replace(temporary, path)
        except BaseException as exc:
            Path(temporary).unlink(missing_ok=True)
            if is_disk_full(exc):
                raise no_space(path.parent, len(json.dumps(self.to_dict(), indent=2))) from None
            if isinstance(exc, OSError):
                raise UserError("not-writable", f"{path}: cannot write the preset ({exc.strerror})") from None
            raise

    def validate(self) -> None:
        """Checks across fields; each field's type and range is checked as it is read."""
        self._check_affinities()
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
                    raise UserError("bad-option", f"{spec.name} option {key} must be one of "
                                                  f"{', '.join(k or '(empty)' for k in kind)}, not {value!r}")
                if kind is int and not str(value).lstrip("-").isdigit():
                    raise UserError("bad-option", f"{spec.name} option {key} must be a whole number, not {value!r}")
                if kind is bool and str(value).lower() not in ("0", "1", "true", "false"):
                    raise UserError("bad-option", f"{spec.name} option {key} must be 0/1 or true/false")
            if spec.name == openvino.NAME:
                openvino.check_options(spec.options)
        if self.device_policy != "none" and [name for name in self.provider_names() if name != "CPUExecutionProvider"]:
            raise UserError("bad-option", f"the device policy {self.device_policy} picks the providers itself: leave "
                                          f"out {', '.join(n for n in self.provider_names() if n != 'CPUExecutionProvider')}")
        self.memory_limit = self.memory_limit.strip()
        self.inputs.validate()

    def _check_affinities(self) -> None:
        """ORT wants one group of logical processors (1-based, '1,2' or '1-3') per intra-op
        thread but the first, so the thread count must be given and match; it refuses the
        session otherwise, and a processor the machine lacks is only logged, not refused."""
        text = self.config_entries.get(FIELD["intra_op_thread_affinities"].entry, self.intra_op_thread_affinities)
        if not text:
            return
        groups = text.split(";")
        threads = self.intra_op_num_threads
        if threads != len(groups) + 1:
            given = f"intra_op_num_threads is {threads}" if threads else "intra_op_num_threads is not set"
            raise UserError("bad-option", f"intra-op thread affinities '{text}' name {len(groups)} group(s), one per "
                                          f"thread but the first, so they need {len(groups) + 1} intra-op threads; "
                                          f"{given}")
        processors = os.cpu_count() or 1
        for group in groups:
            for item in group.split(","):
                ends = item.strip().split("-")
                if len(ends) > 2 or not all(end.strip().isdigit() for end in ends):
                    raise UserError("bad-option", f"intra-op thread affinities '{text}': {item!r} is not a "
                                                  "processor number (from 1) or a range such as 1-4")
                low, high = int(ends[0]), int(ends[-1])
                if low > high:
                    raise UserError("bad-option", f"intra-op thread affinities '{text}': the range {item.strip()} "
                                                  "runs backwards")
                if not 1 <= low <= high <= processors:
                    raise UserError("bad-option", f"intra-op thread affinities '{text}': {item.strip()} is outside "
                                                  f"this machine's logical processors 1–{processors}")

    # what reaches ORT -------------------------------------------------------
    def all_config_entries(self) -> dict[str, str]:
        """The settings ORT takes as session config entries (each where it is not the default),
        then the free-form entries."""
        entries: dict[str, str] = {}
        for row in SESSION_FIELDS:
            text = row.entry_text(getattr(self, row.name)) if row.entry else None
            if text is not None:
                entries[row.entry] = text
        entries.update(self.config_entries)
        return entries

    def provider_names(self) -> list[str]:
        return [p.name for p in self.providers]


def check_preset_target(path: str | os.PathLike) -> None:
    """Refuse a preset file name that names a folder, FIFO, device or socket: a preset
    replaces a file that is there (a saved preset is rewritten), never anything else."""
    from app.core.model.output import check_replaceable

    path = Path(path).absolute()
    if not path.parent.is_dir():
        raise UserError("bad-output", f"{path.parent}: the preset's folder does not exist")
    check_replaceable(path, force=True)


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
