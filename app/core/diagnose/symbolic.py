"""Symbolic dimensions that keep ONNX Runtime from specialising: the model measured with the
plan's concrete sizes fixed as free-dimension overrides and without them, each in a process
of its own on the same feeds, in alternation (app.core.measure.alternate, as a comparison
measures two models), so a finding claims only what its interval shows. The optimised graph's
node count with and without them, read in the diagnosis's child, says what ORT folded."""

from __future__ import annotations

import os
import tempfile

from app.core.jobs.protocol import JobContext, scaled_context
from app.core.session.config import SessionConfig

#: seconds each of the two sessions is timed for, at least (and at least ten rounds)
MEASURE_S = 1.0
#: how much longer, as a multiple of that, the rounds go on while the interval does not answer
EXTEND = 2.0
LABELS = ("dimensions left symbolic", "dimensions fixed")


def candidate_overrides(dims: dict, config: SessionConfig) -> dict:
    """The plan's concrete sizes of named symbolic dimensions that the session does not
    override already (an unnamed dimension has no name to override)."""
    return {name: value for name, value in dims.items()
            if "[" not in name and isinstance(value, int) and value > 0
            and name not in config.free_dimension_overrides}


def with_overrides(config: SessionConfig, overrides: dict) -> SessionConfig:
    fixed = config.checked()
    fixed.free_dimension_overrides = {**config.free_dimension_overrides, **overrides}
    return fixed


def node_counts(path: str, config: SessionConfig, overrides: dict) -> dict:
    """The optimised graph's node count with the dims left symbolic and with `overrides` fixed."""
    import onnx

    from app.core.session.create import create_session, idle_threads_sleep

    counts = {"overrides": overrides}
    with tempfile.TemporaryDirectory() as folder:
        for label, variant in (("symbolic", config), ("fixed", with_overrides(config, overrides))):
            target = os.path.join(folder, f"{label}.onnx")
            create_session(path, idle_threads_sleep(variant),
                           customize=lambda options, t=target: setattr(options, "optimized_model_filepath", t))
            counts[f"nodes_{label}"] = len(onnx.load(target, load_external_data=False).graph.node)
    return counts


def measure_overrides(path: str, config: SessionConfig, overrides: dict, ctx: JobContext, start: float = 0.0,
                      share: float = 1.0, seconds: float = MEASURE_S) -> dict:
    """The session with `overrides` against the session without them, in alternation: the
    speed-up (above 1: fixing them is faster) with its 95 % interval, verdict and medians."""
    from app.core.measure.alternate import alternate, summarize
    from app.core.measure.runs import RunSettings
    from app.core.bench.jobs import MEMBER, MemberParams

    settings = RunSettings(duration_s=seconds)
    sessions = (config.checked(), with_overrides(config, overrides))
    with tempfile.TemporaryDirectory(prefix="ortune-diagnose-") as folder, \
            scaled_context(ctx, start, share, "fixed dimensions against symbolic ones") as stage:
        members = [MemberParams(path=path, session=session, run=settings, variant=label, record=False,
                                reference_dir=folder, is_reference=index == 0)
                   for index, (label, session) in enumerate(zip(LABELS, sessions))]
        alternation = alternate(MEMBER, members, settings, stage, extend_s=EXTEND * seconds * len(members))
    row = summarize(alternation)[1]
    symbolic, fixed = alternation.reports
    return {"speedup": row["speedup"], "speedup_ci": row["speedup_ci"], "verdict": row["verdict"],
            "rounds": row["rounds"], "latency_symbolic_ms": symbolic["latency_ms"]["p50"],
            "latency_fixed_ms": fixed["latency_ms"]["p50"], "alternation": alternation.describe()}
