"""The tuning job: race session settings against the user's own in one process, then
measure the race's finalists again, each alone in its own process, before offering one."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.jobs.entry import ANYWHERE, Job, LOCAL_ONLY, Records
from app.core.jobs.params import Params, setting
from app.core.jobs.results import TuneResult
from app.core.session.config import SessionConfig
from app.core.tune.space import SearchLimits


@dataclass
class TuneParams(Params):
    path: str
    session: SessionConfig = setting(factory=SessionConfig)   # the user's own settings: the baseline
    limits: SearchLimits = setting(factory=SearchLimits)
    candidates: list[dict] | None = None                       # None: build the space from the limits
    strategy: str = setting("race", choices=("race", "grid"), flag="--strategy",
                            help="race, or grid: every setting measured fully (slow, for comparison)")
    budget_trials: int | None = setting(None, minimum=1, flag="--budget-trials", metavar="N",
                                        help="stop after N trials (a trial = one measured block)")
    budget_seconds: float | None = setting(None, minimum=0.001, flag="--budget-seconds", metavar="S",
                                           help="stop the race after S seconds (the re-measurement comes after)")
    block_runs: int = setting(10, minimum=1, flag="--block-runs", metavar="N", help="timed runs per block")
    eta: int = setting(4, minimum=2)                            # a round keeps 1/eta of the contenders
    grid_blocks: int = setting(6, minimum=1)
    final_blocks: int = setting(4, minimum=1)
    warmup: int = setting(3, minimum=0)
    seed: int = 0
    finalists: int = setting(2, minimum=1, flag="--finalists", metavar="N",
                             help="measure the race's best N again, each alone in its own process")
    confirm_seconds: float = setting(2.0, minimum=0.05, flag="--confirm-seconds", metavar="S",
                                     help="how long each finalist and your settings are measured again, at least "
                                          "10 rounds")
    share: list[int] = setting(factory=lambda: [0, 1])          # [i, n]: race every n-th setting from the i-th
    start_s: float = 1.5        # the first guess of one measured process's start (the caller may know better)

    def validate(self) -> None:
        from app.core.jobs.errors import UserError

        if len(self.share) != 2 or not 0 <= self.share[0] < self.share[1]:
            raise UserError("bad-option", f"a share of the settings is [i, n] with 0 ≤ i < n, not {self.share}")


def race_job(params: TuneParams, ctx) -> dict:
    """The race, in a process of its own (app.core.tune.tune)."""
    from app.core.tune.tune import Race
    return Race(params, ctx).run()


def tune_job(params: TuneParams, ctx) -> dict:
    """Runs in the calling process (it only starts children): the race in a child, then
    its finalists and the user's settings, each in a child of its own, in alternation
    (app.core.tune.confirm). A time budget covers all of it (app.core.tune.plan): the race has
    what is left once its start and the re-measurement after it are planned at their cost, and
    after the race the re-measurement is planned again on what is really left."""
    import dataclasses
    import time

    from app.core.runner.process import run_child
    from app.core.measure.alternate import summarize
    from app.core.model.intake import admit
    from app.core.tune.confirm import confirm, finalists, hold_up, judge, remeasure
    from app.core.tune.plan import out_of_time, post_race, race_seconds

    started = time.monotonic()
    budget = params.budget_seconds
    params = dataclasses.replace(params, path=str(admit(params.path).path))
    race_params = params if budget is None else dataclasses.replace(
        params, budget_seconds=race_seconds(budget, params.start_s, params.finalists, params.confirm_seconds))

    # the bar's share for the race: its start and its time, of the whole budget
    race_part = 0.9 if budget is None else min(0.9, (params.start_s + race_params.budget_seconds) / budget)

    def on_race_event(kind: str, payload: dict) -> None:
        if kind == "data":
            ctx.data(payload["kind"], payload["payload"])
        elif kind == "progress":
            fraction = payload.get("fraction")
            ctx.progress(None if fraction is None else race_part * fraction, payload.get("message", ""))
        elif kind == "log":
            ctx.log(payload["message"], payload.get("level", "info"))

    race = run_child(RACE, race_params, ctx, on_race_event)
    # a member's start: the race's own (a process, a session, feeds, warm-up) stands for it
    start_s = max(0.0, time.monotonic() - started - race["seconds"]) + race.get("setup_seconds", 0.0)
    left = None if budget is None else budget - (time.monotonic() - started)
    plan = post_race(left, params.finalists, params.confirm_seconds, start_s, race["default_ms"])
    count, each = plan.count, plan.each
    # measuring alone would run past the budget (+20 %): nothing is offered, and the note says why
    short = "" if race["cancelled"] else out_of_time(left, budget, start_s, race["default_ms"])
    chosen, alternation = ([] if short else finalists(race["trials"], count)), None
    if not race["cancelled"] and not short:
        ctx.progress(0.9 if budget is None else min(0.9, (time.monotonic() - started) / budget),
                     f"measuring the best {len(chosen)} again, each alone in its own process")
        alternation = remeasure(params.path, params.session, [race["trials"][i] for i in chosen], each, ctx)
    result = judge(race, params.session, chosen, alternation)
    if short:
        result["note"] = short
    result["plan"] = {"race_s": race_params.budget_seconds, "finalists": len(chosen), "each_s": each,
                      "start_s": start_s}
    # The winner is the one its re-measurement found faster: that figure leans high (it was
    # picked on it, and the more finalists the more so), so the claim is a fresh one. When
    # none was clearly faster, the closest above ×1 has the time kept for that fresh, longer
    # measurement instead: its interval may have been too wide only for want of rounds.
    closest = _closest(result) if budget is not None and not race["cancelled"] and not short else None
    if closest is not None and budget - (time.monotonic() - started) >= 2 * (each + start_s):
        result = result | {"best": closest, "speedup": closest["speedup"], "speedup_ci": closest["speedup_ci"],
                           "clearly_faster": True}
    if result["clearly_faster"]:
        ctx.progress(0.97 if budget is None else min(0.97, (time.monotonic() - started) / budget),
                     f"measuring {result['best']['label']} against your settings once more, fresh")
        # the claim is one figure: it gets more rounds while its interval is wide, within the budget
        room = 3 * each if budget is None else budget - (time.monotonic() - started) - 2 * (each + start_s)
        fresh = remeasure(params.path, params.session, [result["best"]], each, ctx, extend_s=room)
        result = confirm(result, summarize(fresh)[1], fresh.reports[1], fresh.reports[0], fresh.describe()["load"])
        # a gain on more threads than yours is only as steady as the cores: a second set of processes
        if result.get("rests_on") and (budget is None or budget - (time.monotonic() - started) >= each + 2 * start_s):
            ctx.progress(0.98 if budget is None else min(0.98, (time.monotonic() - started) / budget),
                         f"measuring {result['best']['label']} in a second set of fresh processes")
            again = remeasure(params.path, params.session, [result["best"]], each, ctx)
            result = hold_up(result, summarize(again)[1])
    if budget is not None:       # the race spoke of its own share as "the budget"
        share = race_params.budget_seconds
        reason = (result["stop_reason"].replace(f"The time budget of {share:g} s", "The race's share of the budget")
                  .replace(f"the {share:g} s budget", "the race's share of the budget"))
        best = "best" if len(chosen) == 1 else f"best {len(chosen)}"      # not "its best 1"
        rest = ("no time was left to measure its best alone" if short else
                f"measuring its {best} again alone ({each:.1f} s{' each' if len(chosen) > 1 else ''}) had the rest")
        # a race ends at a round's end: past its share by up to a round, said rather than left to add up
        over = (f" and ran {race['seconds']:.0f} s, as a round under way is finished"
                if round(race["seconds"]) > round(share) else "")
        result["stop_reason"] = reason + f" The race had {share:.0f} s of the {budget:g} s budget{over}; {rest}."
    return result | {"seconds": time.monotonic() - started}


def _closest(result: dict) -> dict | None:
    """The re-measured finalist closest to being faster (above ×1, not slower) when none was
    clearly faster; None otherwise."""
    if result["clearly_faster"]:
        return None
    near = [t for t in result["trials"] if t["remeasured"] and t["speedup"] > 1.0 and t["verdict"] != "slower"]
    if not near:
        return None
    top = max(near, key=lambda t: t["speedup"])
    return dict(top, latency_ms=top["remeasured_ms"], race_latency_ms=top["latency_ms"])


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
