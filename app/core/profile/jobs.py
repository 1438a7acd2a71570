"""The profiling jobs: run a model with the profiler on, read a trace, compare two, copy one."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from app.core.jobs.disk import named_when_full
from app.core.jobs.entry import Job, LOCAL_ONLY, ON_TARGET, Records
from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.jobs.results import ProfileResult
from app.core.session.config import SessionConfig


@dataclass
class ProfileParams(Params):
    model: str
    session: SessionConfig = setting(factory=SessionConfig)
    runs: int | None = setting(None, minimum=1, flag="--runs")      # None: the default number
    out: str | None = None                                           # None: the traces folder
    force: bool = False
    include_first_run: bool = False
    with_timeline: bool = False


@dataclass
class TraceParams(Params):
    trace: str
    include_first_run: bool = False
    with_timeline: bool = False


@dataclass
class TraceDiffParams(Params):
    before: str
    after: str
    include_first_run: bool = False
    before_model: str = ""          # the models the traces came from; "": as ORTune noted them, if it did
    after_model: str = ""


@dataclass
class CopyParams(Params):
    source: str
    target: str


def profile_model_job(params: ProfileParams, ctx) -> dict:
    from app.core.profile import profile
    return profile.profile_model_job(params, ctx)


def read_trace_job(params: TraceParams, ctx) -> dict:
    from app.core.profile.traces import read_reporting, summarize

    trace = read_reporting(params.trace, ctx, 0.0, 0.9, Path(params.trace).name)
    ctx.progress(0.95, "adding up")
    result = summarize(trace, params.include_first_run, params.with_timeline)
    for warning in result["warnings"]:
        ctx.log(warning, "warning")
    ctx.progress(1.0, "done")
    return result


def diff_traces_job(params: TraceDiffParams, ctx) -> dict:
    """The two traces per operator type, with intervals over runs (app.core.profile.diff);
    `models` names the models they came from, where known, for an alternating timing."""
    from app.core.profile.diff import diff_profiles
    from app.core.profile.origins import model_of
    from app.core.profile.traces import read_reporting, summarize

    profiles = []
    for i, (path, model) in enumerate(((params.before, params.before_model), (params.after, params.after_model))):
        trace = read_reporting(path, ctx, 0.5 * i, 0.45, Path(path).name)
        profiles.append(summarize(trace, params.include_first_run) | {"model": model or model_of(path)})
        for warning in profiles[-1]["warnings"]:
            ctx.log(warning, "warning")
    result = diff_profiles(*profiles)
    result["warnings"] = profiles[0]["warnings"] + profiles[1]["warnings"]
    ctx.progress(1.0, "done")
    return result


def copy_trace_job(params: CopyParams, ctx) -> dict:
    """Copy a trace as ORT wrote it (for Perfetto or chrome://tracing)."""
    source, target = Path(params.source), Path(params.target)
    if not source.is_file():
        raise UserError("not-found", f"{source}: the trace file is gone")
    partial = target.with_name(f".{target.name}.part")
    try:
        with named_when_full(target.parent, source.stat().st_size):
            shutil.copyfile(source, partial)
            partial.replace(target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UserError("not-writable", f"{target}: cannot write the trace ({exc.strerror})") from None
    except UserError:
        partial.unlink(missing_ok=True)
        raise
    return {"path": str(target), "bytes": target.stat().st_size}


def _trace_here(params: dict) -> str:
    from app.core.profile.profile import unused_trace_path
    return str(unused_trace_path(params["model"]))


def _profile_facts(params: ProfileParams, result: dict) -> dict:
    """Filed under its model, with the operator type that took the most time."""
    top = (result.get("by_op_type") or [{}])[0]
    variant = f"profile of {result['runs']} runs" + (f", {top['op_type']} {top['percent']:.0f} %" if top else "")
    return {"model": params.model, "variant": variant, "providers": result.get("session_providers") or [],
            "session": result.get("session") or params.session.to_dict()}


PROFILE = Job("profile", profile_model_job, ProfileParams, result=ProfileResult, runs=ON_TARGET, outputs=("out",),
              measures=True, records=Records("profile", _profile_facts), default_output=_trace_here)
READ_TRACE = Job("read-trace", read_trace_job, TraceParams, result=ProfileResult, runs=LOCAL_ONLY)
DIFF_TRACES = Job("diff-traces", diff_traces_job, TraceDiffParams, runs=LOCAL_ONLY)
COPY_TRACE = Job("copy-trace", copy_trace_job, CopyParams, child=False, runs=LOCAL_ONLY, outputs=("target",))
