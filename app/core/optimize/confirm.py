"""The answer measured again before it is claimed. Screening times every candidate briefly,
and the fastest of several brief figures leans high (the winner's curse): a screened ×2.69
was ×1.09 when measured again. So the candidate `choose` picks is timed once more against
the source, alone, in a fresh alternation, and its row takes those figures (the screening's
stay beside them); when it is no longer faster, the next is confirmed in turn. A finalist
measured precisely against the source (app.core.optimize.finalists) leans high too, less:
it was offered for coming out fastest and faster. PP-OCR cls's ORT format was claimed at
×1.10, ×1.07 and ×1.06 on its finalist figure and re-measured later at ×1.06, ×1.00 and
×1.04, every time lower. So it is measured again the same way when the time is there, and its
precise figure stands only when it is not. For every claimed figure, an interval too wide to
tell is not claimed."""

from __future__ import annotations

from app.core.jobs.errors import JobCancelled, JobFailed, UserError
from app.core.optimize.rows import choose

#: candidates confirmed at most, one after the other, before the source is kept
CONFIRM_AT_MOST = 2
#: the confirmation's time per member: this share of the budget, within these bounds (it may
#: take up to three times as long while its interval does not answer)
CONFIRM_SHARE, CONFIRM_MIN_S, CONFIRM_MAX_S = 0.04, 2.0, 8.0


def confirm_seconds(budget_seconds: float, screen_seconds: float) -> float:
    return max(CONFIRM_MIN_S, screen_seconds, min(CONFIRM_MAX_S, CONFIRM_SHARE * budget_seconds))


def _apply(row: dict, speed: dict) -> None:
    from app.core.optimize.rows import next_tokens_note, speed_reason

    key, said = ("as_finalist", "as a finalist") if row.get("finalist") else ("screened", "screened")
    before = row[key] = {k: row[k] for k in ("speedup", "speedup_ci", "verdict", "latency_ms")}
    row.update(speedup=speed["ratio"], speedup_ci=list(speed["ratio_ci"]), verdict=speed["verdict"],
               claim=speed.get("claim", speed["ratio"]),
               latency_ms=speed["variant_p50_ms"], source_latency_ms=speed["source_p50_ms"], confirmed=True)
    row["reason"] = (f"{speed_reason(speed)}, measured again alone ({said} at ×{before['speedup']:.2f} "
                     f"[{before['speedup_ci'][0]:.2f}–{before['speedup_ci'][1]:.2f}])"
                     + next_tokens_note(row.get("fidelity")))


def confirm_best(search, limit: float | None) -> dict:
    """The best row once its speedup has been measured again; the source row when no
    candidate stays faster (or there is no time left to confirm one)."""
    from app.core.convert.speed import measure_speed

    seconds = confirm_seconds(search.params.budget_seconds, search.params.screen_seconds)
    for _ in range(CONFIRM_AT_MOST):
        best = choose(search.rows, limit)
        if best["kind"] == "source" or best.get("confirmed"):
            return best
        # two fresh processes and up to three times their time, besides tuning's share
        no_time = search.budget.left() - search.tune_reserve < 2 * search.budget.start_s + 3 * seconds
        if no_time and best.get("finalist"):      # its precise figure stands: not the screening's
            best["confirmed"] = True
            best["reason"] += "; there was no time left to measure it again, so its finalist figure stands"
            continue
        if no_time:
            best["reason"] += "; there was no time left to measure it again"
            return best
        folder = search.scratch / f"confirm-{best['kind']}"
        folder.mkdir(exist_ok=True)
        try:
            with search.budget.sub(f"{best['kind']}: measuring it again, alone") as sub:
                speed = measure_speed(str(search.source), search.made[best["kind"]], search.config, 2 * seconds,
                                      folder, sub, variant_config=search.sessions.get(best["kind"]))
        except JobCancelled:
            if search.budget.ctx.cancelled:
                raise
            best["reason"] += "; the budget was spent while it was measured again"
            return best
        except (UserError, JobFailed) as exc:
            best["reason"] += f"; it could not be measured again: {exc.message}"
            return best
        _apply(best, speed)
    best = choose(search.rows, limit)
    if best["kind"] != "source" and not best.get("confirmed"):      # a third faster one: not claimed unconfirmed
        best["reason"] += f"; not measured again ({CONFIRM_AT_MOST} faster candidates were not faster alone)"
        best["unconfirmed"] = True      # choose passes over it
        return choose(search.rows, limit)
    return best
