"""The settings a tuner may try, and the combinations that cannot work.

A candidate is a small dict of SessionConfig overrides; applying it to the base preset
gives the session to measure. Pruning follows what ORT allows: inter-op threads only
exist in parallel mode, IO binding only pays off on a device provider, and CUDA
graphs need IO binding and the sequential executor."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from app.core.session.config import ProviderSpec, SessionConfig

OPT_LEVELS = ("disable", "basic", "extended", "all")
DEVICE_PROVIDERS = {"CUDAExecutionProvider", "DmlExecutionProvider", "TensorrtExecutionProvider"}


@dataclass
class SearchLimits:
    """The user's own limits on the search."""
    providers: list[str] = field(default_factory=lambda: ["CPUExecutionProvider"])
    max_threads: int = 0                 # 0: the machine's cores
    opt_levels: tuple[str, ...] = OPT_LEVELS
    execution_modes: tuple[str, ...] = ("sequential", "parallel")
    try_spinning: bool = True
    try_dynamic_block_base: bool = True
    try_io_binding: bool = True
    try_cuda_graph: bool = True


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
                for cuda_graph in graph_choices:
                    candidate = {"provider": provider, "graph_optimization_level": level,
                                 "execution_mode": mode, "intra_op_num_threads": intra,
                                 "inter_op_num_threads": inter, "intra_op_allow_spinning": spin,
                                 "dynamic_block_base": block, "io_binding": binding}
                    if cuda_graph:
                        candidate["enable_cuda_graph"] = True
                    candidates.append(candidate)
    return candidates


def apply_candidate(base: SessionConfig, candidate: dict) -> SessionConfig:
    """The base preset with a candidate's settings (the base keeps its inputs and extras)."""
    config = SessionConfig.from_dict(base.to_dict())
    provider = candidate["provider"]
    options = dict(next((p.options for p in base.providers if p.name == provider), {}))
    if candidate.get("enable_cuda_graph"):
        options["enable_cuda_graph"] = "1"
    config.providers = [ProviderSpec(provider, options)]
    for key in ("graph_optimization_level", "execution_mode", "intra_op_num_threads", "inter_op_num_threads",
                "intra_op_allow_spinning", "dynamic_block_base", "io_binding"):
        setattr(config, key, candidate[key])
    if candidate["execution_mode"] == "parallel":
        config.inter_op_allow_spinning = candidate["intra_op_allow_spinning"]
    config.validate()
    return config


def describe(candidate: dict) -> str:
    """A short label: 'cpu all seq 2t spin dbb4'."""
    from app.core.session.providers import LONG_TO_SHORT

    parts = [LONG_TO_SHORT.get(candidate["provider"], candidate["provider"]),
             candidate["graph_optimization_level"], candidate["execution_mode"][:3],
             f"{candidate['intra_op_num_threads']}t"]
    if candidate["execution_mode"] == "parallel":
        parts.append(f"{candidate['inter_op_num_threads']}i")
    spin = candidate["intra_op_allow_spinning"]
    if spin is not None:
        parts.append("spin" if spin else "nospin")
    if candidate["dynamic_block_base"]:
        parts.append(f"dbb{candidate['dynamic_block_base']}")
    if candidate["io_binding"]:
        parts.append("iob")
    if candidate.get("enable_cuda_graph"):
        parts.append("graph")
    return " ".join(parts)
