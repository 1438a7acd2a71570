"""The optimize job's entry."""

from __future__ import annotations

from app.core.jobs.entry import ANYWHERE, Job, Records
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
    return spread_optimize(job, params, address, tasks, ctx)


def _data_folders(given: dict) -> dict:
    from app.core.optimize.spread import data_folders
    return data_folders(given)


def _arrived(result: dict) -> None:
    from app.core.optimize.ship import arrived
    arrived(result)


# it only starts children: each conversion (which starts its own), the repair loop and tune. On a
# target the whole search runs there (its data folder sent along) and its folder comes back; over a
# cluster its candidates are spread over the workers (app.core.optimize.spread)
OPTIMIZE = Job("optimize", optimize_job, OptimizeParams, child=False, runs=ANYWHERE, outputs=("out_dir",),
               measures=True, records=Records("optimize", _optimize_facts), spread=_spread_optimize,
               arrived=_arrived, folders=_data_folders)
