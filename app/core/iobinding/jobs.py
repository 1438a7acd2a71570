"""The IO binding job: one model fed several ways on one provider."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.iobinding.modes import DEFAULT_ITERATIONS, DEFAULT_WARMUP
from app.core.jobs.entry import Job, ON_TARGET
from app.core.jobs.params import Params, setting
from app.core.jobs.results import IOBindingResult
from app.core.session.config import SessionConfig


@dataclass
class IOBindingParams(Params):
    path: str
    session: SessionConfig = setting(factory=SessionConfig)
    provider: str | None = None                             # None: the session's first provider
    iterations: int = setting(DEFAULT_ITERATIONS, minimum=1, flag="--iterations", metavar="N",
                              help="measured runs of each mode")
    warmup: int = setting(DEFAULT_WARMUP, minimum=0, flag="--warmup", metavar="N",
                          help="runs of each mode before measuring")


def iobinding_job(params: IOBindingParams, ctx) -> dict:
    from app.core.iobinding.iobinding import run_iobinding
    return run_iobinding(params.path, params.session, params.provider, params.iterations, params.warmup, ctx)


IOBINDING = Job("iobinding", iobinding_job, IOBindingParams, result=IOBindingResult, runs=ON_TARGET, measures=True)
