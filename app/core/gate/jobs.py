"""The gate job: the old and the new model each in a process of its own, kept alive and timed
in alternation (the old one is the reference that makes the inputs), for a first stretch,
then longer while the slowdown's interval is too wide to judge, up to max_seconds; then
the outputs, the accuracy on --data and the peak memory, and where the outputs disagree
the drift job on the pair to name the first drifting node."""

from __future__ import annotations

import tempfile
import time

from app.core.bench.alternate import SPEEDUP_DEFINITION, Alternation, BlockPlan, Ensemble, plan_blocks, run_rounds, summarize
from app.core.bench.compare import compare_row
from app.core.bench.jobs import MEMBER, MemberParams, member_events
from app.core.gate.judge import (SLOWDOWN_DEFINITION, UNDECIDED, accuracy_criterion, memory_criterion, overall,
                                 output_criterion, speed_criterion, speed_decision, slowdown)
from app.core.gate.params import GateParams
from app.core.jobs.entry import Job, ON_TARGET, Records
from app.core.jobs.errors import JobCancelled
from app.core.jobs.results import GateResult
from app.core.session.config import SessionConfig

MIN_STRETCH_S = 1.0        # a longer run adds at least this much (both models together)


def _undecided(result: Alternation, limit: float) -> bool:
    row = summarize(result)[1]
    _, low, high = slowdown(row["speedup"], row["speedup_ci"])
    return row.get("too_busy", False) or speed_decision(low, high, limit) == UNDECIDED


def measure(params: GateParams, ctx, labels: list[str], folder: str) -> tuple[Alternation, float]:
    """Rounds of both members until the slowdown can be judged or max_seconds are spent;
    (what was measured, the seconds the timed rounds took)."""
    members = [MemberParams(path=path, session=SessionConfig.from_dict(config.to_dict()), run=params.run,
                            variant=label, reference_dir=folder, is_reference=index == 0,
                            tolerance=params.tolerance, output_tolerance=params.output_tolerance)
               for index, (path, config, label) in enumerate(((params.old, params.old_session, labels[0]),
                                                              (params.new, params.new_session, labels[1])))]
    with Ensemble(MEMBER, ctx, member_events(ctx, labels)) as ensemble:
        run_ms = [ensemble.start(index, member) for index, member in enumerate(members)]
        plan = plan_blocks(params.run, max(run_ms), len(members))
        result = Alternation(plan, [], [[], []], [[], []])
        started = time.monotonic()
        run_rounds(ensemble, [0, 1], plan, result)
        while _undecided(result, params.max_slowdown):
            elapsed = time.monotonic() - started
            left = params.max_seconds - elapsed
            if left <= 0:
                break
            why = ("the machine is too busy (a model's process waited for a core in most rounds)"
                   if summarize(result)[1].get("too_busy") else "the slowdown's interval reaches across the limit")
            ctx.log(f"{why} after {result.rounds} rounds: measuring on ({left:.0f} s left of --max-seconds)")
            # each stretch as long as all before it (the interval narrows as 1/sqrt(rounds))
            stretch = BlockPlan(plan.block_runs, budget_s=min(left, max(elapsed, MIN_STRETCH_S)))
            run_rounds(ensemble, [0, 1], stretch, result)
        seconds = time.monotonic() - started
        result.reports = [ensemble.stop(index) for index in range(len(members))]
    return result, seconds


def first_drift(params: GateParams, ctx) -> tuple[dict | None, str | None]:
    """The drift job on (old, new): (its result, or why it could not run)."""
    from app.core.drift.jobs import DRIFT, DriftParams
    from app.core.runner.process import run_child
    from app.core.session.outputs import Tolerance

    ctx.progress(None, "outputs differ: finding the first drifting node")
    drift = DriftParams(source=params.old, variant=params.new, session=params.old_session,
                        tolerance=Tolerance.from_dict(params.tolerance).to_dict())
    try:
        return run_child(DRIFT, drift, ctx, memory_limit=str(ctx.memory_budget) if ctx.memory_budget else None), None
    except JobCancelled:
        raise
    except Exception as exc:      # the gate's verdict stands without it; say why it is missing
        return None, getattr(exc, "message", None) or str(exc)


def side(report: dict, config: SessionConfig, label: str, history) -> dict:
    path = report["model"]["path"]
    identity = history.model_identity(path) if history is not None else {"path": path}
    return {"label": label, **identity, "session": config.to_dict()}


def gate_job(params: GateParams, ctx) -> dict:
    """Runs in the calling process (it only starts children: the two members, and drift)."""
    from app.core.store.history import History

    new_label, old_label = params.labels()
    labels = [old_label, new_label]
    with tempfile.TemporaryDirectory(prefix="ortune-gate-") as folder:
        measured, seconds = measure(params, ctx, labels, folder)
    old, new = measured.reports
    rows = [compare_row(report, row) for report, row in zip(measured.reports, summarize(measured))]
    drift, drift_error = (None, None)
    if new.get("fidelity") is not None and not new["fidelity"]["passed"]:
        drift, drift_error = first_drift(params, ctx)
    criteria = [speed_criterion(summarize(measured)[1], params.max_slowdown, measured.rounds, seconds,
                                params.max_seconds, old["latency_ms"]["p50"], new["latency_ms"]["p50"]),
                output_criterion(new.get("fidelity"), drift, drift_error),
                accuracy_criterion(old.get("accuracy"), new.get("accuracy"), params.max_accuracy_drop),
                memory_criterion(old.get("peak_rss_bytes"), new.get("peak_rss_bytes"), params.max_memory_growth)]
    history = History(warn=lambda message: ctx.log(message, "warning")) if params.record else None   # hashes only
    result = {
        "verdict": overall(criteria), "criteria": criteria,
        "new": side(new, params.new_session, new_label, history), "old": side(old, params.old_session, old_label, history),
        "slowdown_definition": SLOWDOWN_DEFINITION, "drift": drift,
        # what a comparison reports, so the window's Compare tab shows a gate as it shows a comparison
        "baseline": old_label, "models": rows, "inputs": old["inputs"], "speedup_definition": SPEEDUP_DEFINITION,
        "alternation": measured.describe(), "session": params.new_session.to_dict(), "run": params.run.to_dict(),
        "limits": {"max_slowdown": params.max_slowdown, "max_seconds": params.max_seconds,
                   "max_accuracy_drop": params.max_accuracy_drop, "max_memory_growth": params.max_memory_growth},
        "ort_version": new["ort_version"], "machine": new["machine"], "providers": new["providers"],
        "created": time.time(),
    }
    if history is not None:
        result["model"] = {key: result["new"][key] for key in ("path", "sha256", "size_bytes")}
        result["variant"] = f"{new_label} against {old_label}"
        result["summary"] = {"latency_ms": rows[1]["latency_ms"], "throughput_per_s": rows[1]["throughput_per_s"]}
    return result


def _gate_facts(params: GateParams, result: dict) -> dict | None:
    """Filed under the new model, with both models' hashes in the result (app.core.store.recording)."""
    if not params.record:
        return None
    rows = result["models"]
    return {"model": result["new"]["path"], "variant": result["variant"], "providers": result["providers"],
            "p50_ms": rows[1]["latency_ms"]["p50"], "p99_ms": rows[1]["latency_ms"]["p99"],
            "throughput_per_s": rows[1]["throughput_per_s"], "session": result["session"]}


GATE = Job("gate", gate_job, GateParams, child=False, result=GateResult, runs=ON_TARGET,
           records=Records("gate", _gate_facts), measures=True)   # it only starts children
