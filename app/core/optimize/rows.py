"""The leaderboard's rows: one per candidate, with its status and the reason it won or lost;
and the answer picked from them."""

from __future__ import annotations

from pathlib import Path

from app.core.verdict import FASTER, SLOWER, verdict_words
from app.core.formatting import cosine_text

STATUSES = ("passed", "failed-check", "refused", "skipped")


def _size(path: Path) -> int:
    data = path.with_name(f"{path.name}.data")
    return path.stat().st_size + (data.stat().st_size if data.exists() else 0)


def source_row(source: Path) -> dict:
    return {"kind": "source", "status": "passed", "reason": "the model as it is: every candidate is measured "
                                                            "against it, with the same settings and inputs",
            "speedup": 1.0, "speedup_ci": [1.0, 1.0], "verdict": "reference", "latency_ms": None,
            "fidelity": {"passed": True, "check": "reference"}, "size_bytes": _size(source), "seconds": 0.0}


def failed_row(kind: str, status: str, reason: str) -> dict:
    return {"kind": kind, "status": status, "reason": reason, "speedup": None, "speedup_ci": None, "verdict": None,
            "latency_ms": None, "fidelity": None, "size_bytes": None, "seconds": None}


def candidate_tolerance(given: dict, decoder: bool) -> dict:
    """The tolerance a candidate's check is given: the user's bounds, and for a decoder the
    policy whose task decides (the next tokens, app.core.convert.next_tokens) whatever the kind."""
    from app.core.session.fidelity_policy import DECODER_TASK
    return {**DECODER_TASK.tolerance(), **given} if decoder else dict(given)


def _fidelity(report: dict) -> dict:
    fidelity = report["fidelity"]
    rows = [o for o in fidelity.get("outputs", []) if o.get("max_abs_diff") is not None]
    cosines = [o["cosine"] for o in rows if o.get("cosine") is not None]
    found = {"passed": report["check"] == "passed", "check": report["check"],
             "cosine": min(cosines) if cosines else None,
             "max_abs_diff": max((o["max_abs_diff"] for o in rows), default=None),
             "failing_outputs": [o["name"] for o in fidelity.get("outputs", []) if o.get("passed") is False],
             "tolerance": fidelity.get("tolerance"), "problem": fidelity.get("problem", "")}
    if fidelity.get("next_tokens"):
        found["next_tokens"] = fidelity["next_tokens"]
    return found


def next_tokens_note(fidelity: dict) -> str:
    """"; next tokens agree on 16 of 16 greedy steps …" for a decoder's candidate, else ''."""
    from app.core.convert.next_tokens import agreement_text

    check = (fidelity or {}).get("next_tokens")
    if not check:
        return ""
    return f"; next tokens not measured: {check['problem']}" if "problem" in check else f"; {agreement_text(check)}"


def _where_drifted(report: dict, fidelity: dict) -> str:
    check = fidelity.get("next_tokens") or {}
    if "rate" in check and check["rate"] < check["required"]:
        text = f"failed its check{next_tokens_note(fidelity)}"
    else:
        outputs = ", ".join(fidelity["failing_outputs"]) or "its outputs"
        cosine = f", cosine {cosine_text(fidelity['cosine'])}" if fidelity["cosine"] is not None else ""
        text = f"failed its check: {outputs} outside the tolerance{cosine}"
    repair = report.get("repair")
    if repair:
        steps = repair["steps"]
        drift = next((s["first_drift"] for s in reversed(steps) if s.get("first_drift")), None)
        text += f"; the repair loop ran {len(steps)} step(s) and stopped: {repair['stopped']}"
        if drift:
            text += f"; the drift starts at {drift.get('node')} ({drift.get('op_type')})"
    elif report.get("repair_skipped"):
        text += f"; not repaired: {report['repair_skipped']}"
    return text


def made_row(kind: str, report: dict) -> dict:
    fidelity, speed = _fidelity(report), report["speed"]
    measured = not speed.get("skipped")
    row = {"kind": kind, "speedup": speed["ratio"] if measured else None,
           "speedup_ci": list(speed["ratio_ci"]) if measured else None,
           "verdict": speed["verdict"] if measured else None,
           "claim": speed.get("claim", speed.get("ratio")) if measured else None,
           "contention": speed.get("contention", 0.0) if measured else None,
           "latency_ms": speed["variant_p50_ms"] if measured else None,
           "source_latency_ms": speed["source_p50_ms"] if measured else None,
           "fidelity": fidelity, "size_bytes": report["output_bytes"], "seconds": report["seconds"],
           "options": report.get("options", {}), "repaired": bool(report.get("repair", {}).get("passed"))}
    if "calibration_samples" in report:
        row["calibration_samples"] = report["calibration_samples"]
    if report["check"] == "failed":
        row.update(status="failed-check", reason=_where_drifted(report, fidelity))
    elif report["check"] != "passed":
        row.update(status="refused", reason=f"its check could not run: {fidelity['problem'] or report['check']}")
    elif not measured:
        row.update(status="passed",
                   reason=f"passed its check{next_tokens_note(fidelity)}; its speed was not measured: {speed['why']}")
    else:
        row.update(status="passed", reason=speed_reason(speed) + next_tokens_note(fidelity))
    return row


def speed_reason(speed: dict) -> str:
    """The verdict of the one rule (app.core.verdict) in words, with its figures; a busy
    machine's claim where it is lower than the figure measured; why a slower one is slower."""
    low, high = speed["ratio_ci"]
    figures = f"×{speed['ratio']:.2f} [{low:.2f}–{high:.2f}]"
    verdict = speed["verdict"]
    text = verdict_words(verdict) + (" than the source" if verdict in (FASTER, SLOWER) else "") + f" ({figures})"
    claim = speed.get("claim")
    if verdict == FASTER and claim is not None and claim < speed["ratio"]:
        text += f", claimed at ×{claim:.2f}: the machine was busy, which can widen a gap"
    if verdict not in (FASTER, SLOWER) and speed.get("why_verdict"):
        text += f": {speed['why_verdict'].split(': ', 1)[-1]}"
    return text + (f": {speed['why']}" if verdict == SLOWER and speed.get("why") else "")


def _fits(row: dict, limit: float | None) -> bool:
    return limit is None or (row["latency_ms"] is not None and row["latency_ms"] <= limit)


def choose(rows: list[dict], limit: float | None) -> dict:
    """The fastest candidate whose check passed and which is faster than the source (the whole
    interval beyond the ±2 % band), within the latency limit; else the source."""
    fit = [r for r in rows if r["kind"] != "source" and r["status"] == "passed" and r["verdict"] == "faster"
           and _fits(r, limit) and not r.get("unconfirmed")]
    return max(fit, key=lambda r: r["speedup"]) if fit else rows[0]


CHOSEN = "chosen: the fastest candidate that passed its check — "


def measured_reason(row: dict) -> str:
    """A kept row's reason without the words its search's answer added to it (explain): a row
    reused from an earlier search read "chosen: … — chosen: … — faster …" once chosen again.
    A row that did not pass has no answer's words: its reason is what was measured."""
    return row.get("measured_reason", row["reason"])


def explain(rows: list[dict], best: dict, limit: float | None) -> None:
    """Each measured row's reason, now that the answer is known; the source's median, from
    the alternation that measured the chosen candidate (else a finalist's, else the first)."""
    timed = [r for r in rows[1:] if r.get("source_latency_ms") is not None]
    beside = best if best in timed else next((r for r in timed if r.get("finalist")), timed[0] if timed else None)
    if beside is not None and rows[0]["kind"] == "source":
        rows[0]["latency_ms"] = beside["source_latency_ms"]
        rows[0]["reason"] += f" (its median as timed beside {beside['kind']})"
    for row in rows:
        row["chosen"] = row is best
        if row["status"] != "passed" or row["kind"] == "source":
            continue
        # the words below follow from this answer: a row kept for reuse keeps what was measured without them
        row["measured_reason"] = row["reason"]
        if row is best:
            row["reason"] = f"{CHOSEN}{row['reason']}"
        elif row["verdict"] == "faster" and not _fits(row, limit):
            row["reason"] += f", but its median {row['latency_ms']:.3g} ms is over the limit of {limit:g} ms"
        elif row["verdict"] == "faster":
            row["reason"] += f", but less than {best['kind']}"


def tune_summary(kind: str, result: dict) -> dict:
    """What optimize keeps of tuning `kind`'s session (a tune job's result): the claim, the
    settings, and what the claim rests on when they run more threads than yours."""
    return {"kind": kind, "clearly_faster": bool(result["clearly_faster"]), "speedup": result["speedup"],
            "speedup_ci": result["speedup_ci"], "verdict": result["verdict"], "note": result["note"],
            "session": result["best"]["session"], "seconds": result["seconds"], "rests_on": result.get("rests_on")}


def answer(best: dict, tune: dict, model: Path, preset: Path, user_session: dict, unmeasured: str = "") -> dict:
    """The choice block: the chosen candidate in the folder, with the session settings to run it.
    `unmeasured`: why no candidate was measured at all (app.core.optimize.plan.nothing_measured),
    which the answer says instead of "nothing measured was faster"."""
    tuned = not tune.get("skipped") and tune.get("clearly_faster") and tune.get("kind") == best["kind"]
    # a provider candidate ships the source with its own session (app.core.optimize.provider_kinds)
    settings = tune["session"] if tuned else best.get("session") or user_session
    choice = {"kind": best["kind"], "model": str(model), "preset": str(preset), "speedup": best["speedup"],
              "claim": best.get("claim", best["speedup"]),
              "speedup_ci": best["speedup_ci"], "verdict": best["verdict"], "fidelity": best["fidelity"],
              "settings": settings, "tuned": bool(tuned), "size_bytes": best["size_bytes"],
              "judged_on": best.get("judged_on")}
    if best.get("provider"):            # the source on another provider: what to ship, in words
        choice.update(provider=best["provider"], provider_options=best.get("options", {}), ships=best["ships"])
    if tuned:
        choice["settings_speedup"] = {k: tune[k] for k in ("speedup", "speedup_ci", "verdict")}
        choice["rests_on"] = tune.get("rests_on")    # more threads than yours: the cores free while measured
    if best["kind"] != "source":
        choice["note"] = (f"{best['kind']} ran ×{best['speedup']:.2f} the source's speed"
                          + (f"; tuned settings ran ×{tune['speedup']:.2f} your settings on it (measured apart)"
                             if tuned else ""))
    elif tuned:
        choice.update(speedup=tune["speedup"], speedup_ci=tune["speedup_ci"], verdict=tune["verdict"],
                      note="no variant was faster and faithful: keep the source, with the tuned settings, which ran "
                           f"×{tune['speedup']:.2f} your settings")
    elif unmeasured:
        choice.update(note=f"keep the source and your settings: {unmeasured}", unmeasured=unmeasured)
    else:
        choice["note"] = "nothing measured was faster than the source and faithful: keep the source and your settings"
    return choice


def judged_text(data: dict) -> str:
    """What every verdict was judged on, as one sentence."""
    note = f" ({data['note']})" if data.get("note") else ""
    return f"Judged on {data['judged_on']}{note}"


def _figures(value: float, interval) -> str:
    return f"×{value:.2f}" + (f" [{interval[0]:.2f}–{interval[1]:.2f}]" if interval and None not in interval else "")


def answer_text(choice: dict) -> str:
    """The answer as one sentence, the same in the terminal, the report and the window."""
    text = _answer(choice)
    rests_on = choice.get("rests_on") if choice.get("tuned") else None
    return text + (f"; mind: {rests_on['text']}" if rests_on else "")


def _answer(choice: dict) -> str:
    settings = choice.get("settings_speedup") or {}
    if choice["kind"] == "source" and choice["tuned"]:
        return (f"keep the source, with the tuned settings: {_figures(choice['speedup'], choice['speedup_ci'])} your "
                f"settings' speed ({verdict_words(choice['verdict'])}); no variant was faster and faithful")
    if choice["kind"] == "source" and choice.get("unmeasured"):
        return f"keep the source and your settings, as nothing was measured: {choice['unmeasured']}"
    if choice["kind"] == "source":
        return "keep the source and your settings: nothing measured was faster than the source and faithful"
    figures = _figures(choice["speedup"], choice["speedup_ci"])
    text = f"{choice['kind']}: {figures} the source's speed ({verdict_words(choice['verdict'])})"
    if choice.get("provider"):
        text = f"{choice['kind']} — ship {choice['ships']}: {figures} your provider's speed " \
               f"({verdict_words(choice['verdict'])})"
    claim = choice.get("claim")
    if claim is not None and choice["verdict"] == FASTER and claim < choice["speedup"]:
        text += f", claimed at ×{claim:.2f} as the machine was busy"
    if choice["tuned"] and settings:
        text += (f"; with the tuned settings, {_figures(settings['speedup'], settings.get('speedup_ci'))} your "
                 f"settings' speed on it ({verdict_words(settings['verdict'])}, measured apart)")
    return text


def tune_text(tune: dict) -> str:
    """What tuning the best candidate's session found, as one sentence."""
    if tune.get("skipped"):
        return f"skipped — {tune['why']}"
    if not tune.get("clearly_faster"):
        return f"the session of {tune['kind']}: {tune['note'][:1].lower()}{tune['note'][1:]}"   # names the closest
    note, rests_on = tune["note"], tune.get("rests_on")
    if rests_on and not tune.get("not_taken"):     # taken: the answer itself ends with it (answer_text)
        note = note.replace(f" Mind: {rests_on['text']}.", "")
    text = (f"the session of {tune['kind']}: {_figures(tune['speedup'], tune['speedup_ci'])} your settings' speed "
            f"({tune['verdict']}) — {note}")
    return text + (f" But {tune['not_taken']}." if tune.get("not_taken") else "")


def plot_point(row: dict) -> tuple | None:
    """(kind, speedup, lowest cosine, mark) of a measured candidate for the speed-against-fidelity
    plot, mark being "chosen", "passed" or "failed-check"; None when it has no such figures."""
    fidelity = row.get("fidelity") or {}
    cosine = 1.0 if fidelity.get("check") == "reference" else fidelity.get("cosine")
    if row.get("speedup") is None or cosine is None:
        return None
    mark = "chosen" if row.get("chosen") else "passed" if row["status"] == "passed" else "failed-check"
    return row["kind"], row["speedup"], cosine, mark
