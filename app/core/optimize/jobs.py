"""The optimize job's entry."""

from __future__ import annotations

from app.core.jobs.entry import LOCAL_ONLY, Job
from app.core.optimize.params import OptimizeParams


def optimize_job(params: OptimizeParams, ctx) -> dict:
    from app.core.optimize.search import optimize
    return optimize(params, ctx)


# it only starts children: each conversion (which starts its own), the repair loop and tune;
# here only until its candidates can be made and measured on a target
OPTIMIZE = Job("optimize", optimize_job, OptimizeParams, child=False, runs=LOCAL_ONLY, outputs=("out_dir",),
               measures=True)
