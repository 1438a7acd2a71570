"""Turning a SessionConfig into a real ORT session — and refusing silent fallbacks.

ORT quietly runs on the CPU when a requested provider cannot start; here that is an
error that says why, because a benchmark of the wrong provider is a wrong number."""

from __future__ import annotations

import os
from typing import Callable

from app.core.jobs.errors import UserError
from app.core.ort_messages import ort_text
from app.core.session.providers import (explain_failed_start, installed_ort_package, not_in_build_reason,
                                 preload_cuda_libraries)
from app.core.session.config import PROVIDER_OPTIONS, SessionConfig, supported_config_keys
from app.core.session.fields import FIELD, SESSION_FIELDS
from app.core.session import openvino
from app.core.jobs.stdio import capture_output


def _option_value(provider: str, key: str, value: str):
    kind = PROVIDER_OPTIONS.get(provider, {}).get(key, (str,))[0]
    if kind is bool:
        return "1" if str(value).lower() in ("1", "true") else "0"
    return str(value)


#: session keys ORTune sets itself; every ONNX Runtime it supports (1.20 and newer) knows them
OWN_KEYS = frozenset({"session.disable_prepacking"})


def build_session_options(config: SessionConfig):
    """(SessionOptions, providers, provider_options) for ort.InferenceSession. Where a plugin
    provider or a device policy is asked for, the options hold the providers themselves and
    the lists are empty (ORT takes either, never both)."""
    import onnxruntime as ort

    from app.core.session.plugins import resolve

    config = config.checked()                  # every field read as a preset's would be
    plugins = resolve(config.provider_names(), config.ep_libraries, "" if config.device_policy == "none" else
                      config.device_policy, [spec.plugin for spec in config.providers])
    options = ort.SessionOptions()
    for row in SESSION_FIELDS:
        if row.option:
            value = getattr(config, row.name)
            if isinstance(value, dict):          # a method that takes each pair
                for key, item in value.items():
                    getattr(options, row.option)(key, item)
            else:
                setattr(options, row.option, getattr(getattr(ort, row.enum), row.member(value)) if row.enum else value)
    entries = config.all_config_entries()
    # Reading the keys out of the ORT library costs ~50 ms: only when there is something to check.
    known = supported_config_keys() if set(entries) - OWN_KEYS else frozenset()
    for key, value in entries.items():
        if known and key.startswith("session.") and key not in known | OWN_KEYS:
            raise UserError("bad-option", f"this ONNX Runtime ({ort.__version__}) does not know the session "
                                          f"setting {key}")
        options.add_session_config_entry(key, str(value))
    if plugins or config.device_policy != "none":
        _add_for_devices(options, config, plugins)
        return options, [], []
    providers = config.provider_names()
    if "CPUExecutionProvider" not in providers:
        providers = providers + ["CPUExecutionProvider"]
    provider_options = []
    for name in providers:
        spec = next((p for p in config.providers if p.name == name), None)
        provider_options.append({k: _option_value(name, k, v) for k, v in (spec.options if spec else {}).items()})
    return options, providers, provider_options


def _add_for_devices(options, config: SessionConfig, plugins: dict) -> None:
    """Providers through ORT's device API: a policy picks them, or each is added in order,
    a plugin with its devices, a classic one by name."""
    import onnxruntime as ort

    from app.core.session.plugins import ep_devices

    if config.device_policy != "none":
        if not hasattr(ort, "OrtExecutionProviderDevicePolicy"):
            raise UserError("unsupported", f"ONNX Runtime {ort.__version__} has no device policies (1.22 and newer)")
        row = FIELD["device_policy"]
        options.set_provider_selection_policy(getattr(getattr(ort, row.enum), row.member(config.device_policy)))
        return
    devices = ep_devices()
    for spec in config.providers:
        values = {k: _option_value(spec.name, k, v) for k, v in spec.options.items()}
        if spec.name == openvino.NAME and spec.name in plugins:
            options.add_provider_for_devices(openvino.pick_devices(devices, spec.options),
                                             openvino.plugin_options(spec.options))
        elif spec.name in plugins or spec.name == "CPUExecutionProvider":
            chosen = [d for d in devices if d.ep_name == spec.name]
            if not chosen:
                raise UserError("provider-unavailable", f"{spec.name} is loaded but lists no device here")
            options.add_provider_for_devices(chosen, values)
        else:
            options.add_provider(spec.name, values)


def provider_used(name: str, used: list[str]) -> bool:
    """Did the session run `name`? A plugin may add a variant of it (OpenVINO's '.AUTO')."""
    return any(item == name or item.startswith(name + ".") for item in used)


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

    `customize(options)` may add to the SessionOptions first (profiling, an output path); an
    onnxruntime-genai folder is loaded as its decoder file."""
    import onnxruntime as ort

    from app.core.model.genai import model_file
    from app.core.model.intake import check_name

    check_name(model_path)
    model_path = model_file(model_path)
    options, providers, provider_options = build_session_options(config)
    check_providers_in_build(config)
    if {"CUDAExecutionProvider", "TensorrtExecutionProvider"} & set(config.provider_names()):
        preload_cuda_libraries()
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
        from app.core.session.ep_context import REFUSAL, refusal
        if REFUSAL in text:
            raise UserError("provider-unavailable", refusal(model_path, config.provider_names())) from None
        if any(word in text for word in ("NOT_IMPLEMENTED", "Could not find an implementation")):
            raise UserError("unsupported-model", f"ONNX Runtime cannot run this model here: {text}") from None
        given = {spec.name: spec.options for spec in config.providers if spec.options}
        if given:          # ORT's own words, beside the options it was given
            shown = "; ".join(f"{name} {options}" for name, options in given.items())
            raise UserError("session-failed", f"ONNX Runtime could not create the session (provider options: "
                                              f"{shown}): {text}") from None
        raise UserError("session-failed", f"ONNX Runtime could not load the model: {text}") from None
    used = session.get_providers()
    for name in config.provider_names():
        if not provider_used(name, used):
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
    from app.core.session.plugins import registered_for

    preset = config.to_dict()
    given = {spec.name: spec for spec in config.providers}
    preset["providers"] = []
    for used, opts in session.get_provider_options().items():
        name = next((n for n in given if provider_used(n, [used])), used)
        if name not in given and name != "CPUExecutionProvider":
            continue
        library = registered_for(used) if name != "CPUExecutionProvider" else None
        if library is not None:       # the plugin took the options as given, translated: keep the given
            preset["providers"].append({"name": name, "options": dict(given[name].options),
                                        "plugin": library.source()})
        else:
            preset["providers"].append({"name": name, "options": {k: v for k, v in opts.items()
                                                                  if k in PROVIDER_OPTIONS.get(name, {})}})
    if not any(p.name == "CPUExecutionProvider" for p in config.providers):
        preset["providers"] = [p for p in preset["providers"] if p["name"] != "CPUExecutionProvider"] or preset["providers"]
    return preset


def _registration_lines(config: SessionConfig) -> list[str]:
    """Plain onnxruntime code that loads the plugin libraries the session needs."""
    lines = []
    for name, path in config.ep_libraries.items():
        lines.append(f"ort.register_execution_provider_library({name!r}, {path!r})")
    sources = [spec.plugin for spec in config.providers if spec.plugin]
    if config.device_policy != "none":       # the policy picks among every plugin installed where it was made
        from app.core.session.plugins import installed_packages
        sources += [lib.source() for lib in installed_packages() if not lib.error]
    for source in sources:
        if source.get("library") in config.ep_libraries.values():
            continue
        if source.get("library"):
            lines.append(f"ort.register_execution_provider_library({source['library']!r}, {source['library']!r})")
            continue
        module = source["package"].replace("-", "_")
        lines += [f"import {module}  # pip install {source['package']} (made with {source.get('version', '?')})",
                  f"ort.register_execution_provider_library({source['package']!r}, {module}.get_library_path())"]
    return list(dict.fromkeys(lines))


def _device_lines(config: SessionConfig) -> list[str]:
    """Adding the providers through the device API, as _add_for_devices does."""
    from app.core.session.plugins import classic_providers

    if config.device_policy != "none":
        row = FIELD["device_policy"]
        return [f"options.set_provider_selection_policy(ort.{row.enum}.{row.member(config.device_policy)})"]
    lines = []
    for spec in config.providers:
        values = {k: _option_value(spec.name, k, v) for k, v in spec.options.items()}
        if spec.name == openvino.NAME and spec.plugin:
            wanted = str(spec.options.get("device_type", "CPU")).upper()
            test = (f"d.ep_name == {openvino.AUTO_NAME!r}" if wanted == "AUTO" else
                    f"d.ep_name == {spec.name!r} and d.ep_metadata.get('ov_device') == {wanted!r}")
            values = openvino.plugin_options(spec.options)
        else:
            test = f"d.ep_name == {spec.name!r}"
        if spec.plugin or spec.name == "CPUExecutionProvider" or spec.name not in classic_providers():
            lines.append(f"options.add_provider_for_devices([d for d in ort.get_ep_devices() if {test}], {values!r})")
        else:
            lines.append(f"options.add_provider({spec.name!r}, {values!r})")
    return lines


def with_plugin_records(config: SessionConfig) -> SessionConfig:
    """The config with each provider an installed plugin package brings recorded as such
    (a form or a flag names the provider only; a measured preset records it already)."""
    from app.core.session.plugins import package_source

    if all(spec.plugin or spec.name == "CPUExecutionProvider" for spec in config.providers):
        return config
    recorded = config.checked()
    for spec in recorded.providers:
        if not spec.plugin and spec.name != "CPUExecutionProvider":
            spec.plugin = package_source(spec.name)
    return recorded


def plugin_requirements(config: SessionConfig) -> list[str]:
    """The plugin packages a script of this session needs besides onnxruntime."""
    return sorted({spec.plugin["package"] for spec in with_plugin_records(config).providers
                   if spec.plugin.get("package")})


def to_python(config: SessionConfig, model_path: str = "model.onnx") -> str:
    """A short script that builds exactly this session with the plain onnxruntime API."""
    config = with_plugin_records(config)
    lines = ["import onnxruntime as ort", "", *_registration_lines(config), "options = ort.SessionOptions()"]
    for row in SESSION_FIELDS:           # as build_session_options sets them; a plain value only where not the default
        if not row.option:
            continue
        value = getattr(config, row.name)
        if isinstance(value, dict):
            lines += [f"options.{row.option}({key!r}, {item!r})" for key, item in value.items()]
        elif row.enum:                   # the level and the mode are always written, for the reader
            lines.append(f"options.{row.option} = ort.{row.enum}.{row.member(value)}")
        elif value != row.default:
            lines.append(f"options.{row.option} = {value!r}")
    for key, value in config.all_config_entries().items():
        lines.append(f"options.add_session_config_entry({key!r}, {str(value)!r})")
    if config.device_policy != "none" or config.ep_libraries or any(spec.plugin for spec in config.providers):
        lines += [*_device_lines(config), "",
                  f"session = ort.InferenceSession({str(model_path)!r}, options)"]
        return "\n".join(lines) + "\n"
    providers = []
    for spec in config.providers:
        opts = {k: _option_value(spec.name, k, v) for k, v in spec.options.items()}
        providers.append((spec.name, opts) if opts else spec.name)
    if "CPUExecutionProvider" not in config.provider_names():
        providers.append("CPUExecutionProvider")
    lines.append("")
    lines.append(f"session = ort.InferenceSession({str(model_path)!r}, options, providers={providers!r})")
    return "\n".join(lines) + "\n"
