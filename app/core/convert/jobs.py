"""The conversion jobs: make a variant and prove it; read a transformer's shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.jobs.entry import Job
from app.core.jobs.params import Params, setting
from app.core.jobs.results import ConvertResult
from app.core.model.jobs import ModelPath
from app.core.session.config import SessionConfig


@dataclass
class ConvertParams(Params):
    kind: str                                               # a kind of app.core.convert.options.KINDS
    input: str
    output: str
    force: bool = False
    options: dict[str, Any] = setting(factory=dict)         # checked against the kind's option table
    fidelity: bool = True
    tolerance: dict[str, Any] = setting(factory=dict)       # atol, rtol, min_cosine (None: the kind's)
    session: SessionConfig = setting(factory=SessionConfig)  # the fidelity check's session and inputs


def convert_job(params: ConvertParams, ctx) -> dict:
    from app.core.convert.convert import convert_model
    return convert_model(params, ctx)


def detect_transformer_job(params: ModelPath, ctx) -> dict:
    from app.core.convert.kinds import detect_transformer_shape
    return detect_transformer_shape(params.path)


CONVERT = Job("convert", convert_job, ConvertParams, result=ConvertResult)
DETECT_TRANSFORMER = Job("detect-transformer", detect_transformer_job, ModelPath)
