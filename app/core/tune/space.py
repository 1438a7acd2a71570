"""The settings a tuner may try, and the combinations that cannot work.

A candidate is a small dict of SessionConfig overrides; applying it to the base preset
gives the session to measure. Pruning follows what ORT allows: inter-op threads only
exist in parallel mode, IO binding only pays off on a device provider, and CUDA
graphs need IO binding and the sequential executor. OpenVINO is also tried at its default
precision (bf16 on CPUs with AMX) and in float32, unless you set its precision: a faster
precision that changes the answers is dropped by the race's output check
(app.core.tune.faithful), never offered.

Settings that differ only in options without effect are one setting, never two
contenders whose gap can only be noise: a pool of one thread is no pool (ORT starts no
thread for it), so with one intra-op thread neither spinning nor the dynamic block base
does anything, and inter-op threads and their spinning exist only in parallel mode.
Spinning is one switch for both pools here, so it stays a choice while either pool has
threads (`canonical`, `effective`)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from app.core.jobs.params import Params, setting
from app.core.session.config import ProviderSpec, SessionConfig
from app.core.session.fields import FIELD, OPT_LEVELS as LEVELS
from app.core.session.openvino import NAME as OPENVINO

OPT_LEVELS = tuple(LEVELS)          # every level, the session's own table in its order
DEVICE_PROVIDERS = {"CUDAExecutionProvider", "DmlExecutionProvider", "TensorrtExecutionProvider"}
#: OpenVINO's precisions a search tries: its default ("") and float32
PRECISIONS = ("", "FP32")


@dataclass
class SearchLimits(Params):
    """The user's own limits on the search."""
    providers: list[str] = setting(factory=lambda: ["CPUExecutionProvider"])
    max_threads: int = setting(0, minimum=0)                    # 0: the machine's cores
    opt_levels: list[str] = setting(factory=lambda: list(OPT_LEVELS))
    execution_modes: list[str] = setting(factory=lambda: ["sequential", "parallel"])
    try_spinning: bool = True
    try_dynamic_block_base: bool = True
    try_io_binding: bool = True
    try_cuda_graph: bool = True
    try_precision: bool = True           # OpenVINO: its default precision and float32


def physical_cores() -> int:
    """The cores ORT gives a pool whose thread count is 0 (one thread per physical core)."""
    import psutil

    return psutil.cpu_count(logical=False) or psutil.cpu_count() or 1


def thread_counts(cores: int, limit: int = 0) -> list[int]:
    """1, 2, 4 … up to the cores (and the cores themselves), capped by the user's limit."""
    top = max(1, min(cores, limit) if limit else cores)
    counts = {1, top}
    value = 2
    while value < top:
        counts.add(value)
        value *= 2
    return sorted(counts)


def build_space(limits: SearchLimits, cores: int) -> list[dict]:
    """Every candidate that can work, as SessionConfig overrides."""
    threads = thread_counts(cores, limits.max_threads)
    candidates = []
    for provider in limits.providers:
        device = provider in DEVICE_PROVIDERS
        for level, mode in itertools.product(limits.opt_levels, limits.execution_modes):
            inter_choices = threads if mode == "parallel" else [0]
            spin_choices = [True, False] if limits.try_spinning else [None]
            block_choices = [0, 4] if limits.try_dynamic_block_base else [0]
            binding_choices = [False, True] if (device and limits.try_io_binding) else [False]
            for intra, inter, spin, block, binding in itertools.product(
                    threads, inter_choices, spin_choices, block_choices, binding_choices):
                graph_choices = [False]
                if (provider == "CUDAExecutionProvider" and binding and mode == "sequential"
                        and limits.try_cuda_graph):
                    graph_choices = [False, True]
                precisions = PRECISIONS if provider == OPENVINO and limits.try_precision else (None,)
                for cuda_graph, precision in itertools.product(graph_choices, precisions):
                    candidate = {"provider": provider, "graph_optimization_level": level,
                                 "execution_mode": mode, "intra_op_num_threads": intra,
                                 "inter_op_num_threads": inter, "intra_op_allow_spinning": spin,
                                 "dynamic_block_base": block, "io_binding": binding}
                    if cuda_graph:
                        candidate["enable_cuda_graph"] = True
                    if precision is not None:
                        candidate["precision"] = precision
                    candidate = canonical(candidate)
                    if candidate not in candidates:
                        candidates.append(candidate)
    return candidates


def canonical(candidate: dict) -> dict:
    """The candidate with the options that do nothing in it set to their defaults (see the
    module's docstring), so two that run alike compare and read alike."""
    candidate = dict(candidate)
    intra_pool = candidate["intra_op_num_threads"] != 1
    inter_pool = candidate["execution_mode"] == "parallel" and candidate["inter_op_num_threads"] != 1
    if not intra_pool:
        candidate["dynamic_block_base"] = 0
    if not (intra_pool or inter_pool):
        candidate["intra_op_allow_spinning"] = None
    return candidate


def effective(config: SessionConfig, cores: int) -> dict:
    """The preset as ORT runs it, for telling whether two presets are the same setting:
    thread counts of 0 are ORT's default (one per physical core, `cores`), unset spinning
    is ORT's default (on), and options of a pool without threads, or of the inter-op pool
    in sequential mode, are dropped."""
    settings = config.to_dict()
    parallel = settings["execution_mode"] == "parallel"
    pools = {"intra": settings["intra_op_num_threads"] or cores,
             "inter": (settings["inter_op_num_threads"] or cores) if parallel else 1}
    for pool, threads in pools.items():
        settings[f"{pool}_op_num_threads"] = threads
        for option in (f"{pool}_op_allow_spinning", f"{pool}_op_spin_duration_us", f"{pool}_op_spin_backoff_max"):
            settings[option] = None if threads == 1 else settings[option]
        if threads != 1 and settings[f"{pool}_op_allow_spinning"] is None:
            settings[f"{pool}_op_allow_spinning"] = True
    if pools["intra"] == 1:
        settings["dynamic_block_base"] = 0
    return settings


def apply_candidate(base: SessionConfig, candidate: dict) -> SessionConfig:
    """The base preset with a candidate's settings (the base keeps its inputs and extras)."""
    config = base.checked()
    provider = candidate["provider"]
    options = dict(next((p.options for p in base.providers if p.name == provider), {}))
    if candidate.get("enable_cuda_graph"):
        options["enable_cuda_graph"] = "1"
    if candidate.get("precision") and "precision" not in options:
        # "" is the provider's default; a precision you set for the provider is kept
        options["precision"] = candidate["precision"]
    config.providers = [ProviderSpec(provider, options)]
    for key in ("graph_optimization_level", "execution_mode", "intra_op_num_threads", "inter_op_num_threads",
                "intra_op_allow_spinning", "dynamic_block_base", "io_binding"):
        setattr(config, key, candidate[key])
    if config.intra_op_num_threads != base.intra_op_num_threads:
        # the base's affinities name one core group per thread of its own count
        config.intra_op_thread_affinities = ""
        config.config_entries.pop(FIELD["intra_op_thread_affinities"].entry, None)
    if candidate["execution_mode"] == "parallel":
        config.inter_op_allow_spinning = candidate["intra_op_allow_spinning"]
    config.validate()
    return config


def describe(candidate: dict, base: SessionConfig | None = None) -> str:
    """The candidate in words, as what it changes in the base preset (default: ORT's
    defaults): '2 threads, spinning off, dynamic block base 4'."""
    from app.core.session.settings_text import settings_text

    base = base or SessionConfig()
    return settings_text(apply_candidate(base, candidate).to_dict(), base.to_dict())
