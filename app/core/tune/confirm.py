"""Judging the race's finalists as they will be deployed, before any is offered.

The race (app.core.tune.tune) ranks settings in one process, where sessions taking turns
share caches, the allocator and the cores; a setting it puts ahead can run slower alone.
So its best few (`finalists`) and the user's own settings are measured again, each in a
process of its own with the same inputs, in alternation (app.core.measure.alternate: the
comparison's member job, the user's settings as the reference that writes the feeds).
A finalist is offered only when that re-measurement finds it faster (the whole 95 %
interval of its speedup beyond the practical band); otherwise `best` is the user's own
settings, with a sentence saying what was measured and why nothing is offered.

The winner leans high on the figure it was picked on: it won partly by luck (the winner's
curse), even as the one finalist, since it is offered only when that figure came out faster.
So the winner is measured once more against the user's settings, in fresh processes, and
that figure, not the one it was picked on, is the claim (`confirm`).
"""

from __future__ import annotations

import tempfile

from app.core.measure.alternate import Alternation, OnEvent, alternate, summarize
from app.core.measure.runs import RunSettings
from app.core.jobs.protocol import JobContext
from app.core.session.config import SessionConfig

DEFAULT_LABEL = "default (your session settings)"
#: how far apart two sets of fresh processes may put a gain on more threads than yours
STEADY = 0.05
NOTHING_FASTER_LABEL = "default (no setting was faster)"
RACE_FIELDS = ("strategy", "failed", "merged", "trials_used", "space_size", "rounds", "cancelled", "stop_reason",
               "inputs", "input_dims")


def finalists(trials: list[dict], count: int) -> list[int]:
    """Indices into the race's `trials` of its best `count` that ran without error: those
    still racing first, then those dropped last, each group by the race's score."""
    usable = [i for i, t in enumerate(trials) if not t["error"]]
    usable.sort(key=lambda i: (not trials[i]["alive"], -(trials[i]["eliminated_in_round"] or 0),
                               trials[i]["relative"]))
    return usable[:count]


def remeasure(path: str, base: SessionConfig, chosen: list[dict], seconds: float, ctx: JobContext,
              on_event: OnEvent | None = None, extend_s: float = 0.0) -> Alternation:
    """The user's settings (member 0) and each chosen trial's session, each in its own
    process on the same feeds, timed in alternation for about `seconds` each; with
    `extend_s`, for up to that long more while an interval is wide (app.core.tune.narrow)."""
    from app.core.bench.jobs import MEMBER, MemberParams
    from app.core.session.fidelity_policy import file_precision
    from app.core.tune.faithful import policy_of
    from app.core.tune.narrow import alternate_until_narrow

    settings = RunSettings(duration_s=seconds)
    sessions = [(DEFAULT_LABEL, base)] + [(t["label"], SessionConfig.from_dict(t["session"])) for t in chosen]
    precision = file_precision(path)
    with tempfile.TemporaryDirectory(prefix="ortune-tune-") as folder:
        # each finalist's outputs are held to its policy against the user's settings' (app.core.tune.faithful)
        members = [MemberParams(path=path, session=session, run=settings, variant=label, reference_dir=folder,
                                is_reference=index == 0, tolerance=policy_of(session, base, precision).tolerance())
                   for index, (label, session) in enumerate(sessions)]
        if extend_s > 0:
            return alternate_until_narrow(MEMBER, members, settings, ctx, extend_s, on_event=on_event)
        return alternate(MEMBER, members, settings, ctx, on_event)


def judge(race: dict, base: SessionConfig, chosen: list[int], alternation: Alternation | None) -> dict:
    """The tune result: the race's trials as it saw them (in-process), the finalists'
    re-measured speedups, and `best`: the fastest finalist that the re-measurement found
    faster than the user's settings, or those settings themselves."""
    trials = [dict(t, remeasured=False, speedup=None, speedup_ci=None, verdict=None, remeasured_ms=None,
                   outputs_match=None) for t in race["trials"]]
    default = {"label": DEFAULT_LABEL, "session": base.to_dict(), "latency_ms": race["default_ms"],
               "race_latency_ms": race["default_ms"], "relative": 1.0, "blocks": race["default_blocks"]}
    result = {key: race[key] for key in RACE_FIELDS}
    result["race_seconds"] = race["seconds"]
    result["race_speedup"] = trials[0]["race_speedup"]
    result["alternation"] = alternation.describe() if alternation is not None else None
    if alternation is not None:
        default["latency_ms"] = alternation.reports[0]["latency_ms"]["p50"]
        for index, row, report in zip(chosen, summarize(alternation)[1:], alternation.reports[1:]):
            trials[index].update(remeasured=True, speedup=row["speedup"], speedup_ci=row["speedup_ci"],
                                 verdict=row["verdict"], remeasured_ms=report["latency_ms"]["p50"],
                                 outputs_match=(report.get("fidelity") or {}).get("passed"))
    remeasured = [t for t in trials if t["remeasured"]]
    # faster but with other answers is not offered (app.core.tune.faithful)
    faster = [t for t in remeasured if t["verdict"] == "faster" and t["outputs_match"] is not False]
    if faster:
        top = max(faster, key=lambda t: t["speedup"])
        best = dict(top, latency_ms=top["remeasured_ms"], race_latency_ms=top["latency_ms"])
        figures = {"speedup": top["speedup"], "speedup_ci": top["speedup_ci"], "verdict": top["verdict"]}
        note = (f"{top['label']} ran {top['speedup']:.2f}× as fast as your settings ({_interval(top)}), "
                "each alone in its own process.")
    else:
        best = dict(default, label=NOTHING_FASTER_LABEL)
        figures = {"speedup": 1.0, "speedup_ci": [1.0, 1.0], "verdict": "reference"}
        faithful = [t for t in remeasured if t["outputs_match"] is not False]
        note = nothing_faster(faithful, race["cancelled"]) if faithful or not remeasured else \
            "Nothing is offered: every setting measured again gave other answers than yours. Your settings stay."
    unfaithful = [t for t in remeasured if t["verdict"] == "faster" and t["outputs_match"] is False]
    if unfaithful:
        note += " " + " ".join(f"{t['label']} ran ×{t['speedup']:.2f} but its outputs drift from your settings' "
                               "beyond its fidelity policy: not offered." for t in unfaithful)
    return result | figures | {"default": default, "best": best, "clearly_faster": bool(faster), "note": note,
                               "trials": trials}


def threads_of(session: dict) -> int:
    """The intra-op threads a session runs with, as ORT runs it (app.core.tune.space.effective)."""
    from app.core.tune.space import effective, physical_cores

    return effective(SessionConfig.from_dict(session), physical_cores())["intra_op_num_threads"]


def rests_on_cores(yours: dict, tuned: dict, load: dict | None) -> dict | None:
    """When the tuned settings run more intra-op threads than the user's, their gain needs
    cores the user's settings leave to other programs, and it is only as good as the cores
    free while it was measured: on a 2-core machine where a neighbour takes a core now and
    then, 2 threads over 1 re-measured ×1.23 and ×1.02 against a claim of ×1.28. What the
    claim rests on, for it to say beside it (None when it needs no more cores)."""
    import psutil

    ours, theirs = threads_of(yours), threads_of(tuned)
    if theirs <= ours:
        return None
    cores = psutil.cpu_count() or 1
    others = (load or {}).get("others_cores_p50")
    free = None if others is None else round(max(0.0, cores - others), 1)
    where = f"{free:g} of the {cores} cores were free while it was measured" if free is not None else \
        f"it was measured on {cores} cores"
    return {"threads": theirs, "your_threads": ours, "cores": cores, "free_cores": free,
            "text": f"the gain rests on {theirs} intra-op threads where yours run {ours}: {where}; where other "
                    "programs keep those cores busy it shrinks, so measure where and as the model will run"}


def confirm(result: dict, row: dict, report: dict, default_report: dict | None = None,
            load: dict | None = None) -> dict:
    """The result with its winner's claim replaced by a fresh re-measurement (`row`: the
    winner's summarized speedup against the user's settings; `report`, `default_report`:
    the winner's and the user's settings' latency reports in it; `load`: what the machine's
    load was during it, app.core.measure.noise.summary). The winner's row of the table takes
    the same fresh figures, so the summary and the table tell one measurement. A winner the
    fresh measurement does not find faster is not offered; one whose gain needs more cores
    than the user's settings use says so (`rests_on`)."""
    best = result["best"]
    picked = {"speedup": result["speedup"], "speedup_ci": result["speedup_ci"]}
    fresh = {"speedup": row["speedup"], "speedup_ci": row["speedup_ci"], "verdict": row["verdict"]}
    confirmation = {"picked_on": picked, "fresh": fresh, "load": load}
    default = result["default"]
    if default_report is not None:
        default = dict(default, latency_ms=default_report["latency_ms"]["p50"])
    trials = [dict(t, picked_on=picked, speedup=fresh["speedup"], speedup_ci=fresh["speedup_ci"],
                   verdict=fresh["verdict"], remeasured_ms=report["latency_ms"]["p50"])
              if t["label"] == best["label"] else t for t in result["trials"]]
    result = result | {"default": default, "trials": trials}
    if row["verdict"] == "faster":
        best = dict(best, latency_ms=report["latency_ms"]["p50"], speedup=fresh["speedup"],
                    speedup_ci=fresh["speedup_ci"], remeasured_ms=report["latency_ms"]["p50"])
        note = (f"{best['label']} ran {row['speedup']:.2f}× as fast as your settings ({_interval(row)}), each "
                f"alone in its own process, measured again after it was picked (×{picked['speedup']:.2f}).")
        rests_on = rests_on_cores(default["session"], best["session"], load)
        if rests_on:
            note += f" Mind: {rests_on['text']}."
        return result | fresh | {"best": best, "note": note, "confirmation": confirmation, "rests_on": rests_on}
    note = (f"Nothing is offered: {best['label']} was picked at ×{picked['speedup']:.2f}, but measured again, "
            f"fresh, it ran ×{row['speedup']:.2f} ({_interval(row)}): not clearly faster. Your settings stay.")
    return result | {"speedup": 1.0, "speedup_ci": [1.0, 1.0], "verdict": "reference",
                     "best": dict(default, label=NOTHING_FASTER_LABEL), "clearly_faster": False,
                     "note": note, "confirmation": confirmation}


def hold_up(result: dict, row: dict) -> dict:
    """A confirmed winner whose gain rests on more threads than the user's (`rests_on`),
    measured once more in a second set of fresh processes (`row`: its summarized speedup
    there). Two processes of one 2-thread setting can differ by far more than one process's
    rounds show: on ocr-cls, 2 threads over 1 ran ×1.18 in one pair of processes and ×0.81 in
    the next, the machine quiet. So the claim is the lower of the two sets' figures when both
    are faster and within STEADY of each other; when the second is not faster, or the two
    differ by more (×1.22 and ×1.14 on ocr-cls, then ×0.87 and ×1.14 measured later), nothing
    is offered: a claim that moves that much between processes cannot land within 5 % of a
    later measurement, and the machine is too busy to tell."""
    first = {"speedup": result["speedup"], "speedup_ci": result["speedup_ci"], "verdict": result["verdict"]}
    second = {"speedup": row["speedup"], "speedup_ci": row["speedup_ci"], "verdict": row["verdict"]}
    confirmation = dict(result.get("confirmation") or {}, second_set=second)
    label, threads = result["best"]["label"], result["rests_on"]
    sets = f"×{first['speedup']:.2f} in one set of fresh processes and ×{second['speedup']:.2f} in another"
    moved = max(first["speedup"], second["speedup"]) / min(first["speedup"], second["speedup"]) - 1
    if row["verdict"] != "faster" or moved > STEADY:
        why = ("did not hold on this machine" if row["verdict"] != "faster" else
               f"moved by {moved:.0%} between them, more than the {STEADY:.0%} a claim may: the machine was too "
               "busy to tell")
        note = (f"Nothing is offered: {label} ran {sets} ({_interval(row)}): a gain that rests on "
                f"{threads['threads']} intra-op threads where yours run {threads['your_threads']} {why}. "
                "Your settings stay.")
        return result | {"speedup": 1.0, "speedup_ci": [1.0, 1.0], "verdict": "reference",
                         "best": dict(result["default"], label=NOTHING_FASTER_LABEL), "clearly_faster": False,
                         "note": note, "confirmation": confirmation, "rests_on": None, "did_not_hold": threads}
    lower = min(first, second, key=lambda figures: figures["speedup"])
    best = dict(result["best"], speedup=lower["speedup"], speedup_ci=lower["speedup_ci"])
    trials = [dict(t, speedup=lower["speedup"], speedup_ci=lower["speedup_ci"]) if t["label"] == label else t
              for t in result["trials"]]
    note = (f"{label} ran {sets}, each against your settings alone: the lower is claimed. "
            f"Mind: {threads['text']}.")
    return result | lower | {"best": best, "trials": trials, "note": note, "confirmation": confirmation}


def _interval(trial: dict) -> str:
    low, high = trial["speedup_ci"]
    return f"95 % interval {low:.2f}–{high:.2f}"


def nothing_faster(remeasured: list[dict], cancelled: bool) -> str:
    """Why `best` is the user's own settings, in one sentence."""
    if not remeasured:
        why = "the race was stopped" if cancelled else "no setting could be measured again"
        return (f"Nothing is offered: {why} before its leaders were measured alone, and the race's "
                "in-process figures are no promise. Your settings stay.")
    top = max(remeasured, key=lambda t: t["speedup"])
    claim = f"the race, in one process, had it at ×{top['race_speedup']:.2f}"
    if top["speedup"] > 1.0:
        return (f"Nothing measured was clearly faster than your settings: the closest, {top['label']}, ran "
                f"×{top['speedup']:.2f} ({_interval(top)}) alone, not clearly faster ({claim}; measuring the "
                "finalists again for longer narrows the interval, a bigger race budget does not). Your settings stay.")
    which = ("the race's best" if len(remeasured) == 1          # not "of the race's best 1, the closest"
             else f"of the race's best {len(remeasured)}, the closest")
    return (f"Nothing measured was faster than your settings: {which}, "
            f"{top['label']}, ran ×{top['speedup']:.2f} ({_interval(top)}) alone in its own process ({claim}). "
            "Your settings stay.")


def trials_text(result: dict) -> str:
    """'1 trial over 63 settings' / '3 trials over 63 settings', as the window and the command line say it."""
    used = result["trials_used"]
    return f"{used} trial{'' if used == 1 else 's'} over {result['space_size']} settings"
