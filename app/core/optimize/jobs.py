"""The optimize job's entry."""

from __future__ import annotations

from app.core.jobs.entry import LOCAL_ONLY, Job, Records
from app.core.optimize.params import OptimizeParams


def optimize_job(params: OptimizeParams, ctx) -> dict:
    from app.core.optimize.search import optimize
    return optimize(params, ctx)


def _optimize_facts(params: OptimizeParams, result: dict) -> dict:
    """Filed under its source, with the answer it shipped and the settings to run it with."""
    choice = result.get("choice") or {}
    return {"model": params.model, "variant": f"optimize: {choice.get('kind', 'nothing')}",
            "session": choice.get("settings") or result.get("session") or params.session.to_dict()}


# it only starts children: each conversion (which starts its own), the repair loop and tune;
# here only until its candidates can be made and measured on a target
OPTIMIZE = Job("optimize", optimize_job, OptimizeParams, child=False, runs=LOCAL_ONLY, outputs=("out_dir",),
               measures=True, records=Records("optimize", _optimize_facts))
