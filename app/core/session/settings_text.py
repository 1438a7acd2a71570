"""A session preset in words ("2 threads, spinning off, dynamic block base 4"), whole or as
what it changes against another preset: the tuner's settings, the history's summaries and
the command line's text all read the same."""

from __future__ import annotations

from app.core.session.config import SessionConfig
from app.core.session.fields import LEVEL_WORDS

PROVIDER_WORDS = {"CPUExecutionProvider": "CPU", "CUDAExecutionProvider": "CUDA",
                  "TensorrtExecutionProvider": "TensorRT", "DmlExecutionProvider": "DirectML",
                  "OpenVINOExecutionProvider": "OpenVINO", "CoreMLExecutionProvider": "Core ML",
                  "ROCMExecutionProvider": "ROCm", "XnnpackExecutionProvider": "XNNPACK"}
#: aspects always named in a whole description, default or not
ALWAYS = ("providers", "level", "threads", "mode")


def provider_words(name: str) -> str:
    return PROVIDER_WORDS.get(name, name.replace("ExecutionProvider", ""))


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}" + ("" if number == 1 else "s")


def _threads(number: int) -> str:
    return "a thread per core" if number == 0 else _count(number, "thread")


def aspects(settings: dict) -> dict[str, tuple[str, bool]]:
    """Each aspect of a preset (a SessionConfig dict) as (words, is ORT's default); an
    option without effect in this preset (spinning of a pool of one thread) is left out."""
    config = SessionConfig.from_dict(settings)
    parallel = config.execution_mode == "parallel"
    intra_pool = config.intra_op_num_threads != 1
    inter_pool = parallel and config.inter_op_num_threads != 1
    providers = []
    for spec in config.providers:
        options = {k: v for k, v in spec.options.items() if k != "enable_cuda_graph"}
        providers.append(provider_words(spec.name) + (
            " (" + ", ".join(f"{k} {v}" for k, v in options.items()) + ")" if options else ""))
    found = {"providers": (" then ".join(providers), False),
             "level": (LEVEL_WORDS[config.graph_optimization_level], config.graph_optimization_level == "all"),
             "threads": (_threads(config.intra_op_num_threads), config.intra_op_num_threads == 0)}
    spins = [on is not False for on, pool in ((config.intra_op_allow_spinning, intra_pool),
                                              (config.inter_op_allow_spinning, inter_pool)) if pool]
    if spins:
        text = "spinning " + ("on" if spins[0] else "off")
        if len(spins) == 2 and spins[0] != spins[1]:
            text += f" (inter-op {'on' if spins[1] else 'off'})"
        found["spinning"] = (text, all(spins))
    if intra_pool:
        block = config.dynamic_block_base
        found["block"] = (f"dynamic block base {block}" if block else "no dynamic block base", block == 0)
    found["mode"] = (f"parallel with {_threads(config.inter_op_num_threads).replace('thread', 'inter-op thread')}"
                     if parallel else "sequential", not parallel)
    found["binding"] = ("IO binding" if config.io_binding else "no IO binding", not config.io_binding)
    graph = any(str(s.options.get("enable_cuda_graph", "0")).lower() in ("1", "true") for s in config.providers)
    found["graph"] = ("CUDA graph" if graph else "no CUDA graph", not graph)
    for name, words in (("enable_mem_pattern", "memory pattern"), ("enable_cpu_mem_arena", "CPU arena")):
        on = getattr(config, name)
        found[name] = (f"{words} {'on' if on else 'off'}", on)
    found["deterministic"] = ("deterministic compute" if config.use_deterministic_compute
                              else "non-deterministic compute", not config.use_deterministic_compute)
    dims = ", ".join(f"{k} = {v}" for k, v in config.free_dimension_overrides.items())
    found["dims"] = (dims or "no dimension overrides", not dims)
    entries = ", ".join(f"{k} = {v}" for k, v in config.config_entries.items())
    found["entries"] = (entries or "no further entries", not entries)
    return found


def settings_text(settings: dict, base: dict | None = None) -> str:
    """The preset in words: with no `base`, its provider, optimisation, threads and mode and
    whatever else is not ORT's default; with a `base`, only what differs from the base
    (two presets that run differently never read the same)."""
    own = aspects(settings)
    if base is None:
        return ", ".join(text for key, (text, default) in own.items() if key in ALWAYS or not default)
    theirs = aspects(base)
    # an aspect the base lacks (spinning, when its pool has one thread) is named unless it is the default
    changed = [text for key, (text, default) in own.items()
               if (theirs[key][0] != text if key in theirs else not default)]
    return ", ".join(changed) or "the same settings"
