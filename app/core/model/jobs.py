"""The jobs that read a model without running it."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.jobs.entry import Job, LOCAL_ONLY
from app.core.jobs.params import Params
from app.core.jobs.results import InspectResult


@dataclass
class ModelPath(Params):
    path: str


def inspect_job(params: ModelPath, ctx) -> dict:
    from app.core.model.inspect import inspect_model
    return inspect_model(params.path, ctx)


INSPECT = Job("inspect", inspect_job, ModelPath, result=InspectResult, runs=LOCAL_ONLY)
