"""Execution providers that ship as plugin libraries: the `onnxruntime-ep-*` packages
(onnxruntime-ep-openvino, -webgpu, -nv-tensorrt-rtx …) and any library the user names.

A full onnxruntime (1.22 and newer) loads them at run time: the library is registered with
`register_execution_provider_library`, its devices appear in `get_ep_devices()`, and a session
uses them through `SessionOptions.add_provider_for_devices` (a plugin named in the classic
`providers=` list is silently left out). Registration is per process, so every process that
creates a session registers what its session needs here, once; a provider in the classic
build keeps the classic path."""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass, replace
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.ort_messages import ort_text

PACKAGE_PREFIX = "onnxruntime-ep-"


@dataclass(frozen=True)
class PluginLibrary:
    registration: str                  # the name it is registered under
    path: str
    package: str = ""                  # the distribution ("" for a library the user named)
    version: str = ""
    ep_names: tuple[str, ...] = ()     # the providers it brought
    error: str = ""                    # why it could not be found or loaded

    def source(self) -> dict:
        """What a preset records to find the library again."""
        if self.package:
            return {"package": self.package, "version": self.version}
        return {"library": self.path}

    def to_dict(self) -> dict:
        return {"registration": self.registration, "path": self.path, "package": self.package,
                "version": self.version, "providers": list(self.ep_names), "error": self.error}


_registered: dict[str, PluginLibrary] = {}     # path -> the library as registered in this process
_classic: tuple[str, ...] | None = None


def classic_providers() -> tuple[str, ...]:
    """The providers compiled into this ORT build (read before any plugin is registered:
    a registered plugin joins get_available_providers())."""
    global _classic
    if _classic is None:
        import onnxruntime as ort

        _classic = tuple(ort.get_available_providers())
    return _classic


@functools.lru_cache(maxsize=1)
def installed_packages() -> tuple[PluginLibrary, ...]:
    """Every installed `onnxruntime-ep-*` distribution, with its library (or why not); read
    once a process (a tuning run makes hundreds of sessions, and reading costs ~50 ms)."""
    import importlib.metadata as metadata

    found: dict[str, PluginLibrary] = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").strip()
        key = name.lower().replace("_", "-")
        if not key.startswith(PACKAGE_PREFIX) or key in found:
            continue
        top = (dist.read_text("top_level.txt") or "").split()
        module_name = top[0] if top else key.replace("-", "_")
        try:
            module = importlib.import_module(module_name)
            path = str(module.get_library_path())
            names = tuple(str(n) for n in module.get_ep_names()) if hasattr(module, "get_ep_names") else ()
            library = PluginLibrary(key, path, key, dist.version, names)
        except Exception as exc:  # a broken plugin package is reported, never fatal
            library = PluginLibrary(key, "", key, dist.version, (),
                                    f"the package does not give its library: {ort_text(str(exc))[:200]}")
        found[key] = library
    return tuple(sorted(found.values(), key=lambda lib: lib.package))


def named_library(name: str, path: str) -> PluginLibrary:
    """A library the user named (--ep-library NAME=PATH), checked to be a file."""
    where = Path(path).expanduser()
    if not where.is_file():
        what = "not found" if not where.exists() else "not a regular file"
        raise UserError("not-found", f"execution provider library {name}: {where} {what}")
    return PluginLibrary(name, str(where.resolve()))


def _ep_names() -> set[str]:
    import onnxruntime as ort

    return {device.ep_name for device in ort.get_ep_devices()}


def register(library: PluginLibrary) -> PluginLibrary:
    """Register one library in this process (once); the library with the providers it
    brought, or with ORT's reason it did not load."""
    import onnxruntime as ort

    if library.error:
        return library
    done = _registered.get(os.path.realpath(library.path))
    if done is not None:
        return done
    classic_providers()
    before = _ep_names()
    try:
        ort.register_execution_provider_library(library.registration, library.path)
    except Exception as exc:  # ORT raises its own types for a library that is not a plugin
        result = replace(library, error=f"ONNX Runtime could not load it: {ort_text(str(exc))[:300]}")
    else:
        brought = sorted(_ep_names() - before)
        result = replace(library, ep_names=tuple(dict.fromkeys([*library.ep_names, *brought])))
    _registered[os.path.realpath(library.path)] = result
    return result


def register_all(libraries: dict[str, str] | None = None) -> list[PluginLibrary]:
    """Register every installed plugin package and each named library (NAME=PATH)."""
    named = [named_library(name, path) for name, path in (libraries or {}).items()]
    return [register(library) for library in [*installed_packages(), *named]]


def registered_for(provider: str) -> PluginLibrary | None:
    """The registered library that brought `provider`, if a plugin did (a provider of the
    build keeps the build's)."""
    if provider in classic_providers():
        return None
    return next((lib for lib in _registered.values() if not lib.error and provider in lib.ep_names), None)


def package_source(provider: str) -> dict:
    """The record of the installed package that brings `provider` ({} for a provider of the
    build or of no installed package): what a preset made without running it records."""
    if provider in classic_providers():
        return {}
    return next((lib.source() for lib in installed_packages() if not lib.error and provider in lib.ep_names), {})


def needs_plugins(names: list[str], libraries: dict, policy: str, sources: list[dict]) -> bool:
    return bool(libraries or policy or any(sources) or set(names) - set(classic_providers()))


def resolve(names: list[str], libraries: dict[str, str], policy: str = "",
            sources: list[dict] | None = None) -> dict[str, PluginLibrary]:
    """Register what a session's providers `names` need and return the plugin library of each
    provider a plugin brings. `sources` are a preset's records of each provider's plugin; a
    missing one is named. A recorded library is not loaded from the record (a preset from
    elsewhere must not load native code unasked): the user names it with --ep-library. A
    provider neither in the build nor brought by a plugin is left to the caller's message."""
    sources = sources or [{} for _ in names]
    if not needs_plugins(names, libraries, policy, sources):
        return {}
    for library in register_all(libraries):
        if library.error and not library.package:
            raise UserError("provider-unavailable", f"execution provider library {library.registration} "
                                                    f"({library.path}): {library.error}")
    plugins = {}
    for name, source in zip(names, sources):
        library = registered_for(name)
        if library is not None:
            plugins[name] = library
        elif source.get("package") and name not in classic_providers():
            raise UserError("provider-unavailable",
                            f"{name} comes from the plugin package {source['package']} {source.get('version', '')}"
                            f", which is not installed here: pip install {source['package']}")
        elif source.get("library") and name not in classic_providers():
            raise UserError("provider-unavailable",
                            f"{name} came from the library {source['library']} where this preset was made; load it "
                            f"with --ep-library NAME={source['library']} (the Session tab's provider libraries)")
    return plugins


def ep_devices() -> list:
    import onnxruntime as ort

    return list(ort.get_ep_devices()) if hasattr(ort, "get_ep_devices") else []


def describe_device(ep_device) -> dict:
    device = ep_device.device
    return {"provider": ep_device.ep_name, "provider_vendor": ep_device.ep_vendor,
            "type": str(device.type).rsplit(".", 1)[-1], "vendor": device.vendor,
            "vendor_id": int(device.vendor_id), "device_id": int(device.device_id),
            "metadata": {**dict(device.metadata), **dict(ep_device.ep_metadata)}}


def session_devices(session) -> list[dict]:
    """The devices of the providers a session runs (with a device policy, the ones it picked)."""
    used = session.get_providers()
    try:
        return [describe_device(d) for d in ep_devices() if d.ep_name in used]
    except Exception:  # an old or partial API: the providers alone still say where it runs
        return []


def devices_text(devices: list[dict]) -> str:
    """'OpenVINOExecutionProvider: CPU (Intel); CPUExecutionProvider: CPU (Intel)'."""
    return "; ".join(f"{d['provider']}: {d['type']} ({d['vendor']})" for d in devices)
