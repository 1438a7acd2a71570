"""The gate job: the old and the new model each in a process of its own, kept alive and timed
in alternation (the old one is the reference that makes the inputs), in several pairs of
fresh processes (app.core.measure.pairs), then in more pairs while the slowdown's interval is
too wide to judge, as long as another fits in max_seconds; then
the outputs, the accuracy on --data and the peak memory, and where the outputs disagree
the drift job on the pair to name the first drifting node."""

from __future__ import annotations

import tempfile
import time

from app.core.measure.alternate import SPEEDUP_DEFINITION, Alternation, alternate, summarize
from app.core.bench.compare import compare_row
from app.core.bench.jobs import MEMBER, MemberParams, both_phases, member_events
from app.core.measure.pairs import Pairs, per_pair
from app.core.gate.judge import (SLOWDOWN_DEFINITION, UNDECIDED, accuracy_criterion, judged_speed, memory_criterion,
                                 overall, output_criterion, speed_criterion, speed_decision, slowdown)
from app.core.gate.params import GateParams
from app.core.jobs.entry import Job, ON_TARGET, Records
from app.core.jobs.errors import JobCancelled
from app.core.jobs.results import GateResult
from app.core.session.config import SessionConfig
from app.core.session.fidelity_policy import GivenTolerance


def unanswered(row: dict, limit: float) -> str | None:
    """Why the new model's row of a summary (alternate.summarize) calls for another pair of
    processes, or None: its slowdown is judged against `limit` and its verdict is told. Within
    the limit but no direction yet, the gate measures on as compare would, so its speed verdict
    is the one compare, convert and optimize give the same pair."""
    judged = judged_speed(row)
    _, low, high = slowdown(row["speedup"], list(judged.widened))
    decided = speed_decision(low, high, limit) != UNDECIDED
    if decided and judged.answered:
        return None
    return ("the slowdown is within the limit, but its interval cannot yet tell faster, slower or no difference"
            if decided else "the slowdown's interval reaches across the limit") + (
        " (widened: a model's process waited for a core in most rounds)" if row.get("too_busy") else "")


def gate_tolerance(params: GateParams) -> tuple[dict, str]:
    """(the tolerance the outputs are held to, why): the user's bounds over the fidelity
    policy of the kind of variant the new model is against the old (app.core.session.
    fidelity_policy.for_pair); the strict float32 policy where a model's graph cannot be read
    here (an .ort file)."""
    from app.core.session.fidelity_policy import for_paths

    policy, why = for_paths(params.old, params.new)
    given = ", your bounds over it" if params.tolerance else ""
    return {**policy.tolerance(), **params.tolerance}, why + given


def measure(params: GateParams, ctx, labels: list[str], folder: str, tolerance: dict) -> tuple[Alternation, float, Pairs]:
    """Both members in `params.pairs` pairs of fresh processes, then more pairs while the
    slowdown cannot be judged against the limit or its verdict is "could not tell", as long
    as another fits in max_seconds (app.core.measure.pairs);
    (what was measured, the seconds it took, starts included, the pairs' rule)."""
    members = [MemberParams(path=path, session=SessionConfig.from_dict(config.to_dict()), run=params.run,
                            variant=label, reference_dir=folder, is_reference=index == 0,
                            tolerance=GivenTolerance.from_dict(tolerance), output_tolerance=params.output_tolerance)
               for index, (path, config, label) in enumerate(((params.old, params.old_session, labels[0]),
                                                              (params.new, params.new_session, labels[1])))]
    started = time.monotonic()

    def answered(result: Alternation) -> bool:
        why = unanswered(summarize(result)[1], params.max_slowdown)
        if why is None:
            return True
        left = params.max_seconds - (time.monotonic() - started)
        ctx.log(f"{why} after {len(set(result.pairs))} pairs: measuring on in a fresh pair ({left:.0f} s left "
                "of --max-seconds)")
        return False

    pairs = Pairs(params.pairs, params.max_seconds, answered)
    result = alternate(MEMBER, members, per_pair(params.run, params.pairs), ctx, member_events(ctx, labels),
                       pairs=pairs)
    return result, time.monotonic() - started, pairs


def first_drift(params: GateParams, ctx, tolerance: dict) -> tuple[dict | None, str | None]:
    """The drift job on (old, new): (its result, or why it could not run)."""
    from app.core.drift.jobs import DRIFT, DriftParams
    from app.core.runner.process import run_child
    from app.core.session.outputs import Tolerance

    ctx.progress(None, "outputs differ: finding the first drifting node")
    drift = DriftParams(source=params.old, variant=params.new, session=params.old_session,
                        tolerance=GivenTolerance.from_dict(Tolerance.from_dict(tolerance).to_dict()))
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
    tolerance, policy_why = gate_tolerance(params)
    with tempfile.TemporaryDirectory(prefix="ortune-gate-") as folder:
        measured, seconds, pairs = measure(params, ctx, labels, folder, tolerance)
    old, new = measured.reports
    if new.get("fidelity") is not None:
        new["fidelity"]["policy_why"] = policy_why
    rows = [compare_row(report, row) for report, row in zip(measured.reports, summarize(measured))]
    drift, drift_error = (None, None)
    if new.get("fidelity") is not None and not new["fidelity"]["passed"]:
        drift, drift_error = first_drift(params, ctx, tolerance)
    # the two medians the slowdown is the ratio of (CPU times or trimmed blocks), not every run's p50
    criteria = [speed_criterion(summarize(measured)[1], params.max_slowdown, measured.rounds, seconds,
                                params.max_seconds, measured.judged_p50_ms(0), measured.judged_p50_ms(1)),
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
        "alternation": measured.describe(pairs=pairs), "session": params.new_session.to_dict(), "run": params.run.to_dict(),
        "limits": {"max_slowdown": params.max_slowdown, "max_seconds": params.max_seconds,
                   "max_accuracy_drop": params.max_accuracy_drop, "max_memory_growth": params.max_memory_growth},
        "ort_version": new["ort_version"], "machine": new["machine"], "providers": new["providers"],
        "created": time.time(),
    }
    generation = both_phases([(params.old, params.old_session, old_label), (params.new, params.new_session, new_label)],
                             rows, old["inputs"], params.run, params.pairs, params.max_seconds, ctx)
    if generation is not None:          # reported beside the criteria: the speed criterion judges the plan's phase
        result["generation"] = generation
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
