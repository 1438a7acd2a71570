"""The diagnosis job: why this model is slow here."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.diagnose.symbolic import MEASURE_S
from app.core.jobs.entry import Job, LOCAL_ONLY, ON_TARGET
from app.core.jobs.params import Params, setting
from app.core.jobs.results import DiagnoseResult
from app.core.session.config import SessionConfig


@dataclass
class DiagnoseParams(Params):
    path: str
    session: SessionConfig = setting(factory=SessionConfig)
    trace: str | None = None                                # a profile trace to read instead of profiling
    runs: int = setting(10, minimum=1, flag="--runs", metavar="N", help="profiled runs")   # as many as the Profile tab's
    timing_runs: int = setting(200, minimum=1)
    timing_s: float = setting(3.0, minimum=0.001)
    symbolic_s: float = setting(MEASURE_S, minimum=0)       # per session, symbolic dims against fixed; 0: not tried


def gather_job(params: DiagnoseParams, ctx) -> dict:
    from app.core.diagnose.diagnose import gather
    return gather(params, ctx)


def diagnose_job(params: DiagnoseParams, ctx) -> dict:
    from app.core.diagnose.diagnose import diagnose
    return diagnose(params, ctx, GATHER)


GATHER = Job("diagnose-evidence", gather_job, DiagnoseParams, result=DiagnoseResult, runs=LOCAL_ONLY)
DIAGNOSE = Job("diagnose", diagnose_job, DiagnoseParams, child=False, result=DiagnoseResult, runs=ON_TARGET,
               measures=True)   # it only starts children
