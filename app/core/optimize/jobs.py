"""The optimize job's entries: the search, and a cluster task's share of it."""

from __future__ import annotations

from app.core.jobs.entry import ANYWHERE, HERE, LOCAL_ONLY, Job, Records
from app.core.jobs.results import OptimizeResult
from app.core.optimize.params import OptimizeParams


def optimize_job(params: OptimizeParams, ctx) -> dict:
    from app.core.optimize.search import optimize
    return optimize(params, ctx)


def _optimize_facts(params: OptimizeParams, result: dict) -> dict:
    """Filed under its source, with the answer it shipped and the settings to run it with."""
    choice = result.get("choice") or {}
    return {"model": params.model, "variant": f"optimize: {choice.get('kind', 'nothing')}",
            "session": choice.get("settings") or result.get("session") or params.session.to_dict()}


def _spread_optimize(job: Job, params: OptimizeParams, address: str, tasks: int | None = None, ctx=None) -> dict:
    from app.core.optimize.spread import spread_optimize
    return spread_optimize(job, OPTIMIZE_PART, params, address, tasks, ctx)


def _data_folders(given: dict) -> dict:
    from app.core.optimize.spread import data_folders
    return data_folders(given)


def _check_elsewhere(params: OptimizeParams, place: str) -> None:
    """A search sent to a target or a cluster: its data folder can travel and its folder here can
    take what comes back (app.core.optimize.spread.check_elsewhere)."""
    if place != HERE:
        from app.core.optimize.spread import check_elsewhere
        check_elsewhere(params)


def _part_job(params: OptimizeParams, ctx) -> dict:
    from app.core.optimize.spread import part_job
    return part_job(params, ctx)


def _arrived(result: dict) -> None:
    from app.core.optimize.ship import arrived
    arrived(result)


# it only starts children: each conversion (which starts its own), the repair loop and tune. On a
# target the whole search runs there (its data folder sent along) and its folder comes back; over a
# cluster its candidates are spread over the workers (app.core.optimize.spread)
OPTIMIZE = Job("optimize", optimize_job, OptimizeParams, child=False, result=OptimizeResult, runs=ANYWHERE,
               outputs=("out_dir",), measures=True, records=Records("optimize", _optimize_facts), spread=_spread_optimize,
               arrived=_arrived, folders=_data_folders, before=_check_elsewhere)

# a Ray task's share of a search spread over a cluster: it makes, checks and times its candidates
OPTIMIZE_PART = Job("optimize-part", _part_job, OptimizeParams, child=False, runs=LOCAL_ONLY, folders=_data_folders)
