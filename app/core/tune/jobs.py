"""The tuning job: race session settings against the user's own in one process, then
measure the race's finalists again, each alone in its own process, before offering one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.jobs.entry import ANYWHERE, Job, LOCAL_ONLY, Records
from app.core.jobs.params import Params, setting
from app.core.jobs.results import TuneResult
from app.core.session.config import SessionConfig


@dataclass
class TuneParams(Params):
    path: str
    session: SessionConfig = setting(factory=SessionConfig)   # the user's own settings: the baseline
    limits: dict[str, Any] = setting(factory=dict)             # SearchLimits fields (app.core.tune.space)
    candidates: list[dict] | None = None                       # None: build the space from the limits
    strategy: str = setting("race", choices=("race", "grid"), flag="--strategy")
    budget_trials: int | None = setting(None, minimum=1, flag="--budget-trials")
    budget_seconds: float | None = setting(None, minimum=0.001, flag="--budget-seconds")
    block_runs: int = setting(10, minimum=1, flag="--block-runs")
    eta: int = setting(4, minimum=2)                            # a round keeps 1/eta of the contenders
    grid_blocks: int = setting(6, minimum=1)
    final_blocks: int = setting(4, minimum=1)
    warmup: int = setting(3, minimum=0)
    seed: int = 0
    finalists: int = setting(2, minimum=1, flag="--finalists")                    # re-measured alone
    confirm_seconds: float = setting(2.0, minimum=0.05, flag="--confirm-seconds")   # each, at least 10 rounds
    share: list[int] = setting(factory=lambda: [0, 1])          # [i, n]: race every n-th setting from the i-th

    def validate(self) -> None:
        from app.core.tune.space import SearchLimits
        from app.core.jobs.errors import UserError

        if len(self.share) != 2 or not 0 <= self.share[0] < self.share[1]:
            raise UserError("bad-option", f"a share of the settings is [i, n] with 0 ≤ i < n, not {self.share}")
        unknown = set(self.limits) - set(SearchLimits.__dataclass_fields__)
        if unknown:
            raise UserError("bad-option", f"unknown search limit(s): {', '.join(sorted(unknown))}")


def race_job(params: TuneParams, ctx) -> dict:
    """The race, in a process of its own (app.core.tune.tune)."""
    from app.core.tune.tune import Race
    return Race(params, ctx).run()


#: of a time budget, the race has this share; measuring its best again alone, the rest
RACE_SHARE = 0.45
#: of a time budget, this share is kept for narrowing the claim (the winner's fresh confirmation)
CLAIM_SHARE = 0.2
#: the shortest a member of the re-measurement is timed, however little budget is left
LEAST_EACH_S = 0.1


def after_race(left_s: float | None, finalists: int, each_s: float, start_s: float) -> tuple[int, float]:
    """How many finalists to measure again and for how long each, so that what follows the
    race fits in `left_s` (None: no budget). Each member costs its start (`start_s`: a process,
    a session, warm-up) and its time; more than one finalist needs a fresh last pass of the
    winner and the user's settings (confirm)."""
    if left_s is None:
        return finalists, each_s
    for count in range(finalists, 0, -1):
        members = count + 1 + (2 if count > 1 else 0)
        room = left_s / members - start_s
        if room >= each_s or (count == 1 and room >= LEAST_EACH_S):
            return count, min(each_s, room)
        if room >= max(LEAST_EACH_S, each_s / 2):
            return count, room
    return 1, LEAST_EACH_S


def tune_job(params: TuneParams, ctx) -> dict:
    """Runs in the calling process (it only starts children): the race in a child, then
    its finalists and the user's settings, each in a child of its own, in alternation
    (app.core.tune.confirm). A time budget covers all of it: the race has RACE_SHARE of
    it, CLAIM_SHARE is kept for the winner's confirmation, and what is left between them sets
    how many finalists are measured again and for how long."""
    import dataclasses
    import time

    from app.core.runner.process import run_child
    from app.core.bench.alternate import summarize
    from app.core.model.intake import admit
    from app.core.tune.confirm import confirm, finalists, judge, remeasure

    started = time.monotonic()
    budget = params.budget_seconds
    params = dataclasses.replace(params, path=str(admit(params.path).path))
    race_params = params if budget is None else dataclasses.replace(params, budget_seconds=budget * RACE_SHARE)

    def on_race_event(kind: str, payload: dict) -> None:
        if kind == "data":
            ctx.data(payload["kind"], payload["payload"])
        elif kind == "progress":
            fraction = payload.get("fraction")
            ctx.progress(None if fraction is None else 0.9 * fraction, payload.get("message", ""))
        elif kind == "log":
            ctx.log(payload["message"], payload.get("level", "info"))

    race = run_child(RACE, race_params, ctx, on_race_event)
    # a member's start: the race's own (a process, a session, feeds, warm-up) stands for it
    start_s = max(0.0, time.monotonic() - started - race["seconds"]) + race.get("setup_seconds", 0.0)
    left = None if budget is None else budget * (1 - CLAIM_SHARE) - (time.monotonic() - started)
    count, each = after_race(left, params.finalists, params.confirm_seconds, start_s)
    chosen, alternation = finalists(race["trials"], count), None
    if not race["cancelled"]:
        ctx.progress(0.9, f"measuring the best {len(chosen)} again, each alone in its own process")
        alternation = remeasure(params.path, params.session, [race["trials"][i] for i in chosen], each, ctx)
    result = judge(race, params.session, chosen, alternation)
    # The winner is the one its re-measurement found faster: that figure leans high (it was
    # picked on it, and the more finalists the more so), so the claim is a fresh one.
    if result["clearly_faster"]:
        ctx.progress(0.97, f"measuring {result['best']['label']} against your settings once more, fresh")
        # the claim is one figure: it gets more rounds while its interval is wide, within the budget
        room = 3 * each if budget is None else budget - (time.monotonic() - started) - 2 * (each + start_s)
        fresh = remeasure(params.path, params.session, [result["best"]], each, ctx, extend_s=room)
        result = confirm(result, summarize(fresh)[1], fresh.reports[1], fresh.reports[0])
    if budget is not None:       # the race spoke of its own share as "the budget"
        share = race_params.budget_seconds
        reason = (result["stop_reason"].replace(f"The time budget of {share:g} s", "The race's share of the budget")
                  .replace(f"the {share:g} s budget", "the race's share of the budget"))
        result["stop_reason"] = (reason + f" The race had {share:.0f} s of the {budget:g} s budget; measuring its "
                                 f"best {len(chosen)} again alone ({each:.1f} s each) had the rest.")
    return result | {"seconds": time.monotonic() - started}


def _tune_facts(params: TuneParams, result: dict) -> dict:
    """Filed with the settings it offers (the user's own when nothing was clearly faster)."""
    best = result["best"]
    variant = f"tune: {best.get('label', '')} ×{result['speedup']:.2f}" if result.get("clearly_faster") else \
        "tune: your settings stay"
    return {"model": params.path, "variant": variant,
            "p50_ms": best.get("latency_ms"), "session": best.get("session") or params.session.to_dict()}


def _spread_tune(job: Job, params: TuneParams, address: str, tasks: int | None = None,
                 ctx=None) -> dict:
    from app.core.tune.spread import spread_tune
    return spread_tune(job, params, address, tasks, ctx)


RACE = Job("tune-race", race_job, TuneParams, runs=LOCAL_ONLY)
TUNE = Job("tune", tune_job, TuneParams, child=False, result=TuneResult, runs=ANYWHERE, measures=True,
           records=Records("tune", _tune_facts), spread=_spread_tune)   # it only starts children
