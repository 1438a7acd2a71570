"""The conversion jobs: make a variant, prove it and measure it against its source; read a
transformer's shape."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.jobs.entry import Job, LOCAL_ONLY, ON_TARGET, Records
from app.core.jobs.params import Params, setting
from app.core.jobs.protocol import JobContext, stage_events
from app.core.jobs.results import ConvertResult
from app.core.model.jobs import ModelPath
from app.core.session.config import SessionConfig
from app.core.session.fidelity_policy import GivenTolerance

#: seconds the variant and its source are timed for, in all, unless asked otherwise
SPEED_S = 2.0
#: the share of the progress bar the making and checking take when the speed is measured after
MAKE_SHARE = 0.8


@dataclass
class ConvertParams(Params):
    kind: str                                               # a kind of app.core.convert.options.KINDS
    input: str
    output: str
    force: bool = False
    options: dict[str, Any] = setting(factory=dict)         # checked against the kind's option table
    fidelity: bool = True
    tolerance: GivenTolerance = setting(factory=GivenTolerance)   # over the kind's policy
    session: SessionConfig = setting(factory=SessionConfig)  # the fidelity check's and the speed check's session
    speed_s: float = setting(SPEED_S, minimum=0, flag="--speed-seconds")  # variant against source; 0: not measured


@dataclass
class MakeParams(ConvertParams):
    feeds_file: str = ""                                    # where the check's feeds are saved (.npz), if anywhere


@dataclass
class NextTokensParams(Params):
    path: str                                               # a decoder, run on `session`
    session: SessionConfig = setting(factory=SessionConfig)
    reference_session: SessionConfig = setting(factory=SessionConfig)   # the same decoder on the user's settings
    tolerance: GivenTolerance = setting(factory=GivenTolerance)   # its min_top1, and whether the task decides


def next_tokens_job(params: NextTokensParams, ctx) -> dict:
    """A decoder's next tokens on one session against its own on another (optimize's provider
    candidates: the source on OpenVINO against the source on the user's provider), in a
    process of its own: {"check": app.core.convert.next_tokens.next_token_check's dict, or None}."""
    from app.core.convert.next_tokens import next_token_check
    from app.core.session.outputs import Tolerance

    return {"check": next_token_check(params.path, params.path, params.session,
                                      Tolerance.from_dict(dict(params.tolerance)), ctx, params.reference_session)}


def make_job(params: MakeParams, ctx) -> dict:
    """The variant made and checked, in a process of its own."""
    from app.core.convert.convert import convert_model
    return convert_model(params, ctx)


def convert_job(params: ConvertParams, ctx: JobContext) -> dict:
    """Runs in the calling process (it only starts children): the variant is made and checked
    in one child, then measured against its source in alternation, each in a child of its
    own on the check's feeds (app.core.convert.speed)."""
    from app.core.convert.speed import not_measured, variant_speed
    from app.core.runner.process import run_child

    share = MAKE_SHARE if params.speed_s else 1.0
    forward = stage_events(ctx, 0.0, share)

    with tempfile.TemporaryDirectory(prefix="ortune-convert-") as folder:
        feeds = Path(folder) / "check-feeds.npz"
        make = MakeParams.from_dict({**params.to_dict(), "feeds_file": str(feeds) if params.speed_s else ""})
        limit = str(ctx.memory_budget) if ctx.memory_budget else None
        report = run_child(MAKE, make, ctx, forward, memory_limit=limit)
        if not params.speed_s:
            report["speed"] = not_measured("the speed check was turned off")
        else:
            report["speed"] = variant_speed(report, params, feeds, Path(folder), ctx, start=share)
    ctx.progress(1.0, "done")
    return report


def detect_transformer_job(params: ModelPath, ctx) -> dict:
    from app.core.convert.transformers import detect_transformer_shape
    return detect_transformer_shape(params.path)


def _convert_facts(params: ConvertParams, result: dict) -> dict:
    """Filed under its source, as the kind and the variant it made, with the variant's speed."""
    speed = result.get("speed") or {}
    return {"model": params.input, "variant": f"{params.kind} → {Path(result['output']).name}",
            "p50_ms": speed.get("variant_p50_ms"), "session": params.session.to_dict()}


MAKE = Job("convert-make", make_job, MakeParams,
           runs=LOCAL_ONLY, outputs=("output",))   # the report of ConvertResult, less its speed
CONVERT = Job("convert", convert_job, ConvertParams, child=False, result=ConvertResult, runs=ON_TARGET,
              outputs=("output",), measures=True, records=Records("convert", _convert_facts))   # it only starts children
NEXT_TOKENS = Job("next-tokens", next_tokens_job, NextTokensParams, runs=LOCAL_ONLY)
DETECT_TRANSFORMER = Job("detect-transformer", detect_transformer_job, ModelPath, runs=LOCAL_ONLY)
