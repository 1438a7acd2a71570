"""The drift job: where a variant's values part from its source's, tensor by tensor; and the
repair loop, which keeps the node drift points at and converts again."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.convert.jobs import ConvertParams
from app.core.jobs.entry import Job, LOCAL_ONLY, ON_TARGET, Records
from app.core.jobs.params import Params, setting
from app.core.jobs.results import DriftResult, RepairResult
from app.core.session.config import SessionConfig
from app.core.session.fidelity_policy import GivenTolerance


@dataclass
class DriftParams(Params):
    source: str
    variant: str
    tolerance: GivenTolerance = setting(factory=GivenTolerance)   # over the variant kind's policy
    session: SessionConfig = setting(factory=SessionConfig)  # the session and the input plan both run on


def drift_job(params: DriftParams, ctx) -> dict:
    from app.core.drift.drift import drift
    return drift(params, ctx)


def _drift_facts(params: DriftParams, result: dict) -> dict:
    """Filed under the source, naming the variant and where it first parts from it."""
    from pathlib import Path

    first = result.get("first_drift")
    where = f", first at {first.get('node') or first.get('tensor')}" if first else ", within tolerance"
    return {"model": params.source, "variant": f"drift of {Path(params.variant).name}{where}",
            "session": params.session.to_dict()}


DRIFT = Job("drift", drift_job, DriftParams, result=DriftResult, runs=ON_TARGET, measures=True,
            records=Records("drift", _drift_facts))


@dataclass
class RepairParams(Params):
    convert: ConvertParams                                  # the conversion to repair (its output is replaced)
    keep: list[str] = setting(factory=list)                 # nodes to keep from the first step on
    max_steps: int = setting(8, minimum=1, flag="--repair-steps")
    max_seconds: float = setting(600.0, minimum=1, flag="--repair-seconds")   # no new step starts after


def repair_job(params: RepairParams, ctx) -> dict:
    from app.core.drift.repair import repair
    from app.core.runner.process import run_child

    base = params.convert
    limit = str(ctx.memory_budget) if ctx.memory_budget else None

    def find_drift(variant: str, step_ctx) -> dict:
        drift = DriftParams(source=base.input, variant=variant, tolerance=base.tolerance, session=base.session)
        return run_child(DRIFT, drift, step_ctx, memory_limit=limit)

    return repair(params, ctx, find_drift)


# it only starts children: each step's conversion (which starts its own) and drift
REPAIR = Job("repair", repair_job, RepairParams, child=False, result=RepairResult, runs=LOCAL_ONLY)
