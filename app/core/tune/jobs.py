"""The tuning job: race session settings against the user's own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.jobs.entry import Job
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

    def validate(self) -> None:
        from app.core.tune.space import SearchLimits
        from app.core.jobs.errors import UserError

        unknown = set(self.limits) - set(SearchLimits.__dataclass_fields__)
        if unknown:
            raise UserError("bad-option", f"unknown search limit(s): {', '.join(sorted(unknown))}")


def tune_job(params: TuneParams, ctx) -> dict:
    from app.core.tune.tune import Race
    return Race(params, ctx).run()


TUNE = Job("tune", tune_job, TuneParams, result=TuneResult)
