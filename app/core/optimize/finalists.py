"""The candidates timed against the source: all at once in one brief alternation (the
screening: one process per candidate and one for the source, not two per candidate), then
precise intervals for the finalists only. Screening times every candidate briefly, so
its intervals are wide and its best leans high (it was picked for coming out fastest);
the best few are then measured again together, in alternation against the source (each
in a fresh process of its own, app.core.tune.narrow), for the share of the budget kept for
them, with rounds going on while an interval is wide. Their rows take those figures (the
screening's stay beside them), so the answer rests on the precise measurement, not on the
one it was picked on. Cancelled, the whole rounds measured so far still count."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from typing import Callable

from app.core.measure.alternate import BLOCK_S, MIN_BLOCK_RUNS, MIN_ROUNDS, Alternation, BlockPlan, summarize
from app.core.measure.runs import RunSettings
from app.core.jobs.errors import JobCancelled
from app.core.optimize.budget import START_GUESS_S
from app.core.optimize.rows import next_tokens_note, speed_reason
from app.core.session.config import SessionConfig
from app.core.session.fidelity_policy import GivenTolerance

#: how many of the screened candidates are measured precisely
COUNT = 3


def blocks_seconds(alternation: Alternation) -> float:
    """The seconds an alternation's members spent timing blocks (the rest of its wall time
    went to starting and stopping them)."""
    return float(sum(sum(walls) for walls in alternation.walls))


#: however little time is left, an alternation has at least this many rounds
LEAST_ROUNDS = 3


def fitted_rounds(wanted: int, left_s: float, round_s: float) -> int:
    """The fewest rounds an alternation takes: `wanted`, or as many rounds of `round_s`
    seconds as fit in `left_s` (at least LEAST_ROUNDS). The screening wanted 30 rounds: with
    a 100 ms detector and a slower int8 variant that is a minute, whatever its budget said."""
    if round_s <= 0:
        return wanted
    return max(LEAST_ROUNDS, min(wanted, int(max(0.0, left_s) // round_s)))


def fit_plan(plan: BlockPlan, run_ms: float, members: int, left_s: float) -> BlockPlan:
    """`plan` made to end within `left_s` (seconds from now, the members started): fewer
    least rounds (each `members` blocks of the slowest's `run_ms`), a shorter time, less
    extension."""
    round_s = members * plan.block_runs * run_ms / 1000.0
    rounds = fitted_rounds(plan.min_rounds, left_s, round_s)
    budget_s = max(0.0, min(plan.budget_s, left_s))
    extend = max(0.0, min(plan.extend_s, left_s - max(budget_s, rounds * round_s)))
    return replace(plan, min_rounds=rounds, budget_s=budget_s, extend_s=extend)


def screen_together(reports: dict[str, dict], config: SessionConfig, seconds: float, ctx,
                    left: Callable[[], float] | None = None) -> tuple[dict[str, dict], float]:
    """(kind -> the speed block (app.core.convert.speed's fields) of each report in `reports`
    (checked candidates, kind -> conversion report), all timed in one alternation with the
    source (each for about `seconds`, and within `left()` seconds once they are started);
    the seconds the blocks took, the rest being starts)."""
    from app.core.measure.alternate import plan_blocks, run_alternation
    from app.core.bench.jobs import MEMBER, MemberParams
    from app.core.convert.speed import EXTEND, SPEED_ROUNDS, slower_hint, speed_fields

    kinds = list(reports)
    source = next(iter(reports.values()))["input"]
    settings = RunSettings(duration_s=max(seconds, 0.001))
    with tempfile.TemporaryDirectory(prefix="ortune-screen-") as folder:
        # a provider candidate (app.core.optimize.provider_kinds) runs on its own session, its
        # outputs checked under its policy's tolerance
        members = [MemberParams(path=path, session=(report.get("session") or config).checked(), run=settings,
                                variant=kind, record=False, reference_dir=folder, is_reference=index == 0,
                                tolerance=GivenTolerance.from_dict(report.get("tolerance", {})))
                   for index, (kind, path, report) in enumerate([("source", source, {})]
                                                                + [(k, reports[k]["output"], reports[k]) for k in kinds])]

        def make_plan(run_ms: float, _result) -> BlockPlan:
            plan = plan_blocks(settings, run_ms, len(members), SPEED_ROUNDS, EXTEND * seconds)
            return fit_plan(plan, run_ms, len(members), left()) if left is not None else plan

        alternation = run_alternation(MEMBER, members, ctx, None, None, make_plan)
    source_report = alternation.reports[0]
    speeds = {}
    source_p50 = alternation.judged_p50_ms(0)
    for position, (kind, row, report) in enumerate(zip(kinds, summarize(alternation)[1:], alternation.reports[1:]), 1):
        speed = speed_fields(row) | {"source_p50_ms": source_p50,
                 "variant_p50_ms": alternation.judged_p50_ms(position), "rounds": row["rounds"],
                 "providers": report["providers"], "inputs": source_report["inputs"],
                 "feeds": "made for the source", "measured_with": f"{len(kinds)} candidate(s) at once"}
        hint = slower_hint(kind, report["providers"], reports[kind]["options"]) if row["verdict"] == "slower" else ""
        speeds[kind] = speed | ({"why": hint} if hint else {}) | (
            {"fidelity": report.get("fidelity")} if "session" in reports[kind] else {})
    return speeds, blocks_seconds(alternation)


def pick(rows: list[dict], count: int = COUNT) -> list[dict]:
    """The screening's best `count` that passed their check and were not slower than the source;
    a candidate reused with its figures from an earlier search's finalists is not measured again."""
    usable = [r for r in rows if r["kind"] != "source" and r["status"] == "passed" and r["speedup"] is not None
              and r["verdict"] != "slower" and not (r.get("reused") and r.get("finalist"))]
    return sorted(usable, key=lambda r: -r["speedup"])[:count]


def least_seconds(members: int, start_s: float = START_GUESS_S) -> float:
    """The fewest seconds `members` members (the source among them) can be measured in."""
    return members * (start_s + 0.5)


def plan_time(seconds: float, members: int, start_s: float = START_GUESS_S) -> tuple[float, float]:
    """(each member's time, the seconds more the rounds may go on) within `seconds` for
    `members` members (the source among them), each start costing `start_s`; (0, 0) when
    they do not fit."""
    room = seconds - members * start_s
    if seconds <= least_seconds(members, start_s):
        return 0.0, 0.0
    each = 0.6 * room / members
    return each, 0.4 * room


def _update(rows: list[dict], alternation: Alternation, partial: bool) -> None:
    if partial and alternation.rounds < MIN_ROUNDS:      # too few rounds to say more than the screening did
        for row in rows:
            row["reason"] += f" (its measurement as a finalist was stopped after {alternation.rounds} rounds)"
        return
    from app.core.convert.speed import speed_fields
    from app.core.tune.narrow import thinned

    summary = summarize(thinned(alternation))       # the p50s below come from every run
    reports = alternation.reports or [alternation.figures(i) for i in range(len(alternation.blocks))]
    source_ms = reports[0]["latency_ms"]["p50"]
    for row, line, report in zip(rows, summary[1:], reports[1:]):
        row["screening"] = {k: row[k] for k in ("speedup", "speedup_ci", "verdict")}
        speed = speed_fields(line)     # the claim and contention are this measurement's, not the screening's
        row.update(speedup=line["speedup"], speedup_ci=list(line["speedup_ci"]), verdict=line["verdict"],
                   claim=speed["claim"], contention=speed["contention"],
                   latency_ms=report["latency_ms"]["p50"], source_latency_ms=source_ms,
                   reason=speed_reason(speed) + f" — measured precisely as a finalist, {line['rounds']} rounds"
                   + (" (stopped early)" if partial else "") + next_tokens_note(row.get("fidelity")), finalist=True)


def measure_finalists(rows: list[dict], made: dict[str, str], config: SessionConfig, seconds: float, ctx,
                      start_s: float = START_GUESS_S, sessions: dict[str, SessionConfig] | None = None) -> dict:
    """Measure `rows` (the finalists) against the source in `made` within about `seconds`;
    their rows are updated in place. Returns what was done, for the result. `sessions`: the
    session of each kind that runs on its own (a provider candidate), else `config`'s."""
    sessions = sessions or {}
    from app.core.bench.jobs import MEMBER, MemberParams
    from app.core.tune.narrow import alternate_until_narrow

    if not rows:
        return {"skipped": True, "why": "no candidate passed its check without being slower"}
    each, extend = plan_time(seconds, len(rows) + 1, start_s)
    if each <= 0:
        return {"skipped": True, "why": f"{max(0.0, seconds):.0f} s of the budget were left: too few to measure "
                                        "the finalists precisely; their screening figures stand"}
    settings = RunSettings(duration_s=each)
    # the least rounds that fit, at the screening's medians (the slowest's block for every member)
    run_ms = max([r.get("latency_ms") or 0.0 for r in rows] + [rows[0].get("source_latency_ms") or 0.0])
    block = max(MIN_BLOCK_RUNS, int(min(BLOCK_S, each / MIN_ROUNDS) * 1000.0 / run_ms)) if run_ms else 0
    least = fitted_rounds(MIN_ROUNDS, seconds - (len(rows) + 1) * start_s, (len(rows) + 1) * block * run_ms / 1000.0)
    kept: list[Alternation] = []
    with tempfile.TemporaryDirectory(prefix="ortune-finalists-") as folder:
        members = [MemberParams(path=made[kind], session=sessions.get(kind, config).checked(), run=settings,
                                variant=kind, record=False, reference_dir=folder, is_reference=index == 0)
                   for index, kind in enumerate(["source"] + [r["kind"] for r in rows])]
        try:
            alternation = alternate_until_narrow(MEMBER, members, settings, ctx, extend, on_partial=kept.append,
                                                 min_rounds=least)
        except JobCancelled:
            if kept:
                _update(rows, kept[0], partial=True)
            raise
    _update(rows, alternation, partial=False)
    return {"skipped": False, "kinds": [r["kind"] for r in rows], "each_s": each, "extend_s": extend,
            "rounds": alternation.rounds, "alternation": alternation.describe(),
            "blocks_s": blocks_seconds(alternation)}
