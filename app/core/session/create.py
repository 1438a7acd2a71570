"""Turning a SessionConfig into a real ORT session — and refusing silent fallbacks.

ORT quietly runs on the CPU when a requested provider cannot start; here that is an
error that says why, because a benchmark of the wrong provider is a wrong number."""

from __future__ import annotations

import os
from typing import Callable

from app.core.jobs.errors import UserError
from app.core.units import ort_text
from app.core.session.providers import (explain_failed_start, installed_ort_package, not_in_build_reason,
                                 preload_cuda_libraries)
from app.core.session.config import (PROVIDER_OPTIONS, TYPED_ENTRIES, ProviderSpec, SessionConfig,
                                     supported_config_keys)
from app.core.session.fields import EXECUTION_MODES, OPT_LEVELS
from app.core.jobs.stdio import capture_output


def _option_value(provider: str, key: str, value: str):
    kind = PROVIDER_OPTIONS.get(provider, {}).get(key, (str,))[0]
    if kind is bool:
        return "1" if str(value).lower() in ("1", "true") else "0"
    return str(value)


#: session keys ORTune sets itself; every ONNX Runtime it supports (1.20 and newer) knows them
OWN_KEYS = frozenset({"session.disable_prepacking"})


def build_session_options(config: SessionConfig):
    """(SessionOptions, providers, provider_options) for ort.InferenceSession."""
    import onnxruntime as ort

    config = config.checked()                  # every field read as a preset's would be
    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, OPT_LEVELS[config.graph_optimization_level])
    options.execution_mode = getattr(ort.ExecutionMode, EXECUTION_MODES[config.execution_mode])
    options.intra_op_num_threads = config.intra_op_num_threads
    options.inter_op_num_threads = config.inter_op_num_threads
    options.enable_mem_pattern = config.enable_mem_pattern
    options.enable_cpu_mem_arena = config.enable_cpu_mem_arena
    options.use_deterministic_compute = config.use_deterministic_compute
    options.log_severity_level = config.log_severity_level
    for name, value in config.free_dimension_overrides.items():
        options.add_free_dimension_override_by_name(name, int(value))
    entries = config.all_config_entries()
    # Reading the keys out of the ORT library costs ~50 ms: only when there is something to check.
    known = supported_config_keys() if set(entries) - OWN_KEYS else frozenset()
    for key, value in entries.items():
        if known and key.startswith("session.") and key not in known | OWN_KEYS:
            raise UserError("bad-option", f"this ONNX Runtime ({ort.__version__}) does not know the session "
                                          f"setting {key}")
        options.add_session_config_entry(key, str(value))
    providers = config.provider_names()
    if "CPUExecutionProvider" not in providers:
        providers = providers + ["CPUExecutionProvider"]
    provider_options = []
    for name in providers:
        spec = next((p for p in config.providers if p.name == name), None)
        provider_options.append({k: _option_value(name, k, v) for k, v in (spec.options if spec else {}).items()})
    return options, providers, provider_options


def check_providers_in_build(config: SessionConfig) -> None:
    import onnxruntime as ort

    in_build = ort.get_available_providers()
    for name in config.provider_names():
        if name not in in_build:
            raise UserError("provider-unavailable",
                            f"{name} is not available: {not_in_build_reason(name, installed_ort_package())}")


def create_session(model_path: str | os.PathLike, config: SessionConfig,
                   customize: Callable | None = None):
    """Create the session; raise UserError if a requested provider did not really start.

    `customize(options)` may add to the SessionOptions first (profiling, an output path)."""
    import onnxruntime as ort

    from app.core.model.intake import check_name

    check_name(model_path)
    check_providers_in_build(config)
    if {"CUDAExecutionProvider", "TensorrtExecutionProvider"} & set(config.provider_names()):
        preload_cuda_libraries()
    options, providers, provider_options = build_session_options(config)
    if customize is not None:
        customize(options)
    with capture_output() as captured:
        try:
            session = ort.InferenceSession(str(model_path), options, providers=providers,
                                           provider_options=provider_options)
        except Exception as exc:  # ORT reports load failures as its own exception types
            error = exc
        else:
            error = None
    if error is not None:
        text = ort_text(str(error))
        if any(word in text for word in ("NOT_IMPLEMENTED", "Could not find an implementation")):
            raise UserError("unsupported-model", f"ONNX Runtime cannot run this model here: {text}") from None
        raise UserError("session-failed", f"ONNX Runtime could not load the model: {text}") from None
    used = session.get_providers()
    for name in config.provider_names():
        if name not in used:
            raise UserError("provider-unavailable", explain_failed_start(name, captured.text))
    return session


def idle_threads_sleep(config: SessionConfig) -> SessionConfig:
    """The preset for measuring beside other sessions in one process: its thread pools
    stop spinning when a run ends.

    Without this, the idle threads of the session measured last keep spinning on the
    cores the next one needs (three sessions taking turns on two cores ran 1.5-4x
    slower than each alone). Spinning within a run is unaffected. Reports keep the
    user's preset, without this entry."""
    if "session.force_spinning_stop" not in supported_config_keys():
        return config
    measured = config.checked()
    measured.config_entries["session.force_spinning_stop"] = "1"
    return measured


def effective_settings(session, config: SessionConfig) -> dict:
    """What the session really runs with: the preset plus the providers ORT chose and their options."""
    preset = config.to_dict()
    preset["providers"] = [{"name": name, "options": {k: v for k, v in opts.items()
                                                      if k in PROVIDER_OPTIONS.get(name, {})}}
                           for name, opts in session.get_provider_options().items()
                           if name in config.provider_names() or name == "CPUExecutionProvider"]
    if not any(p.name == "CPUExecutionProvider" for p in config.providers):
        preset["providers"] = [p for p in preset["providers"] if p["name"] != "CPUExecutionProvider"] or preset["providers"]
    return preset


def config_from_options(options, providers: list[str], provider_options: list[dict] | None = None,
                        entry_keys=None) -> SessionConfig:
    """Read a SessionConfig back from ORT's SessionOptions (the reverse of build_session_options).

    ORT cannot list the config entries a SessionOptions holds, so `entry_keys` names the
    keys to look for (default: every key this ORT knows). Free dimension overrides and
    the inputs cannot be read back and stay at their defaults."""
    levels = {v: k for k, v in OPT_LEVELS.items()}
    modes = {v: k for k, v in EXECUTION_MODES.items()}
    entries = {}
    for key in sorted(entry_keys if entry_keys is not None else supported_config_keys()):
        try:
            entries[key] = options.get_session_config_entry(key)
        except RuntimeError:   # ORT's answer for a key that was never set
            continue
    typed = {}
    for name, key in TYPED_ENTRIES.items():
        if key not in entries:
            continue
        value = entries.pop(key)
        if name.endswith("allow_spinning"):
            typed[name] = value == "1"
        elif name == "intra_op_thread_affinities":
            typed[name] = value
        else:
            typed[name] = int(value)
    specs = []
    for index, name in enumerate(providers):
        opts = (provider_options or [{}] * len(providers))[index] or {}
        specs.append(ProviderSpec(name, {k: str(v) for k, v in opts.items()}))
    return SessionConfig(
        providers=specs,
        graph_optimization_level=levels[options.graph_optimization_level.name],
        execution_mode=modes[options.execution_mode.name],
        intra_op_num_threads=options.intra_op_num_threads,
        inter_op_num_threads=options.inter_op_num_threads,
        enable_mem_pattern=options.enable_mem_pattern,
        enable_cpu_mem_arena=options.enable_cpu_mem_arena,
        use_deterministic_compute=options.use_deterministic_compute,
        log_severity_level=options.log_severity_level,
        config_entries=entries,
        **typed)


def to_python(config: SessionConfig, model_path: str = "model.onnx") -> str:
    """A short script that builds exactly this session with the plain onnxruntime API."""
    lines = ["import onnxruntime as ort", "", "options = ort.SessionOptions()",
             f"options.graph_optimization_level = ort.GraphOptimizationLevel.{OPT_LEVELS[config.graph_optimization_level]}",
             f"options.execution_mode = ort.ExecutionMode.{EXECUTION_MODES[config.execution_mode]}"]
    defaults = SessionConfig()
    for name in ("intra_op_num_threads", "inter_op_num_threads", "enable_mem_pattern", "enable_cpu_mem_arena",
                 "use_deterministic_compute", "log_severity_level"):
        value = getattr(config, name)
        if value != getattr(defaults, name):
            lines.append(f"options.{name} = {value!r}")
    for name, value in config.free_dimension_overrides.items():
        lines.append(f"options.add_free_dimension_override_by_name({name!r}, {int(value)})")
    for key, value in config.all_config_entries().items():
        lines.append(f"options.add_session_config_entry({key!r}, {str(value)!r})")
    providers = []
    for spec in config.providers:
        opts = {k: _option_value(spec.name, k, v) for k, v in spec.options.items()}
        providers.append((spec.name, opts) if opts else spec.name)
    if "CPUExecutionProvider" not in config.provider_names():
        providers.append("CPUExecutionProvider")
    lines.append("")
    lines.append(f"session = ort.InferenceSession({str(model_path)!r}, options, providers={providers!r})")
    return "\n".join(lines) + "\n"
