"""The drift job: where a variant's values part from its source's, tensor by tensor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.jobs.entry import Job
from app.core.jobs.params import Params, setting
from app.core.jobs.results import DriftResult
from app.core.session.config import SessionConfig


@dataclass
class DriftParams(Params):
    source: str
    variant: str
    tolerance: dict[str, Any] = setting(factory=dict)       # atol, rtol, min_cosine (missing: the variant kind's)
    session: SessionConfig = setting(factory=SessionConfig)  # the session and the input plan both run on


def drift_job(params: DriftParams, ctx) -> dict:
    from app.core.drift.drift import drift
    return drift(params, ctx)


DRIFT = Job("drift", drift_job, DriftParams, result=DriftResult)
