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


def tune_job(params: TuneParams, ctx) -> dict:
    """Runs in the calling process (it only starts children): the race in a child, then
    its finalists and the user's settings, each in a child of its own, in alternation
    (app.core.tune.confirm)."""
    import dataclasses
    import time

    from app.core.runner.process import run_child
    from app.core.bench.alternate import summarize
    from app.core.model.intake import admit
    from app.core.tune.confirm import confirm, finalists, judge, remeasure

    started = time.monotonic()
    params = dataclasses.replace(params, path=str(admit(params.path).path))

    def on_race_event(kind: str, payload: dict) -> None:
        if kind == "data":
            ctx.data(payload["kind"], payload["payload"])
        elif kind == "progress":
            fraction = payload.get("fraction")
            ctx.progress(None if fraction is None else 0.9 * fraction, payload.get("message", ""))
        elif kind == "log":
            ctx.log(payload["message"], payload.get("level", "info"))

    race = run_child(RACE, params, ctx, on_race_event)
    chosen, alternation = finalists(race["trials"], params.finalists), None
    if not race["cancelled"]:
        ctx.progress(0.9, f"measuring the best {len(chosen)} again, each alone in its own process")
        alternation = remeasure(params.path, params.session, [race["trials"][i] for i in chosen],
                                params.confirm_seconds, ctx)
    result = judge(race, params.session, chosen, alternation)
    if result["clearly_faster"] and sum(t["remeasured"] for t in result["trials"]) > 1:
        ctx.progress(0.97, f"measuring {result['best']['label']} against your settings once more, fresh")
        fresh = remeasure(params.path, params.session, [result["best"]], params.confirm_seconds, ctx)
        result = confirm(result, summarize(fresh)[1], fresh.reports[1])
    return result | {"seconds": time.monotonic() - started}


def _tune_facts(params: TuneParams, result: dict) -> dict:
    """Filed with the settings it offers (the user's own when nothing was clearly faster)."""
    best = result["best"]
    variant = f"tune: {best.get('label', '')} ×{result['speedup']:.2f}" if result.get("clearly_faster") else \
        "tune: your settings stay"
    return {"model": params.path, "variant": variant,
            "p50_ms": best.get("latency_ms"), "session": best.get("session") or params.session.to_dict()}


def _spread_tune(job: Job, params: TuneParams, address: str, tasks: int | None = None) -> dict:
    from app.core.tune.spread import spread_tune
    return spread_tune(job, params, address, tasks)


RACE = Job("tune-race", race_job, TuneParams, runs=LOCAL_ONLY)
TUNE = Job("tune", tune_job, TuneParams, child=False, result=TuneResult, runs=ANYWHERE, measures=True,
           records=Records("tune", _tune_facts), spread=_spread_tune)   # it only starts children
