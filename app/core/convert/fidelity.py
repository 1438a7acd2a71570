"""Does a variant still give the source model's answers? Both run on the same feeds, and
every output is measured against the source's (app.core.session.outputs: the numbers, the
tolerance and the verdict per output).

`compare_outputs` is the whole check; `reference_run` + `run_variant` + `compare`
are its steps, for jobs that reuse the source's outputs (conversions validate a
variant with the very run that measures its fidelity)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from app.core.jobs.errors import UserError
from app.core.session.inputs import FeedSpec, numpy_dtype
from app.core.jobs.protocol import JobContext
from app.core.session.outputs import Tolerance, compare_values
from app.core.ort_messages import ort_text
from app.core.session.config import SessionConfig

@dataclass
class Reference:
    """The source's answers: the feeds it ran on and what it returned."""
    feeds: dict
    outputs: dict                                   # name -> value, in the source's order
    info: dict = field(default_factory=dict)        # dims used, shapes, mode, seed


class RunFailed(Exception):
    """A model could not be loaded or run; `stage` is 'load' or 'run'.

    `detail` is ORT's whole message (node names and all), for the repairs to read."""

    def __init__(self, stage: str, message: str, detail: str = ""):
        super().__init__(message)
        self.stage = stage
        self.message = message
        self.detail = detail or message


def load_session(path, config: SessionConfig):
    """An ORT session; a model ORT refuses raises RunFailed('load')."""
    from app.core.session.create import create_session
    try:
        return create_session(path, config)
    except UserError as exc:
        if exc.kind in ("session-failed", "unsupported-model"):
            raise RunFailed("load", exc.message, _whole_load_error(path, config)) from None
        raise


def _whole_load_error(path, config: SessionConfig) -> str:
    """ORT's untruncated reason for refusing a model (create_session keeps one short line)."""
    import onnxruntime as ort

    from app.core.session.create import build_session_options
    from app.core.jobs.stdio import capture_output

    options, providers, provider_options = build_session_options(config)
    with capture_output():
        try:
            ort.InferenceSession(str(path), options, providers=providers, provider_options=provider_options)
        except Exception as exc:  # the same refusal, this time read whole
            return " ".join(str(exc).split())
    return ""


def _run(session, feeds: dict, ctx: JobContext) -> dict:
    import onnxruntime as ort

    options = ort.RunOptions()
    remove = ctx.on_cancel(lambda: setattr(options, "terminate", True))
    try:
        values = session.run(None, feeds, options)
    except Exception as exc:  # ORT reports run failures as its own exception types
        ctx.check_cancel()
        raise RunFailed("run", ort_text(str(exc)), " ".join(str(exc).split())) from None
    finally:
        remove()
    return {arg.name: value for arg, value in zip(session.get_outputs(), values)}


def reference_run(source_path: str | os.PathLike, feed_spec: FeedSpec | None = None,
                  config: SessionConfig | None = None, ctx: JobContext | None = None) -> Reference:
    """Run the source once on seeded (or the user's) feeds."""
    ctx = ctx or JobContext()
    config = config or SessionConfig()
    try:
        session = load_session(source_path, config)
    except RunFailed as exc:
        raise UserError("session-failed", f"the source model cannot be loaded for the fidelity check: "
                                          f"{exc.message}") from None
    from app.core.session.probe import first_run

    run = first_run(source_path, session, feed_spec or config.inputs, ctx)
    if not run.worked:
        dims = ", ".join(f"{k}={v}" for k, v in run.info.get("dims", {}).items())
        raise UserError("source-run-failed",
                        f"the source model fails on the fidelity inputs{f' ({dims})' if dims else ''}: {run.message}")
    return Reference(run.feeds, {arg.name: v for arg, v in zip(session.get_outputs(), run.outputs)}, run.info)


def feeds_for(session, feeds: dict) -> dict:
    """The reference feeds as this session wants them (fp16 inputs get fp16 data)."""
    adapted = {}
    for arg in session.get_inputs():
        if arg.name not in feeds:
            raise RunFailed("run", f"the variant has an input '{arg.name}' the source does not have")
        value = feeds[arg.name]
        wanted = numpy_dtype(arg.type)
        if isinstance(value, np.ndarray) and value.dtype != wanted and wanted.kind != "U":
            value = value.astype(wanted)
        adapted[arg.name] = value
    return adapted


def run_variant(variant_path: str | os.PathLike, reference: Reference,
                config: SessionConfig | None = None, ctx: JobContext | None = None) -> dict:
    """Load and run the variant on the reference's feeds (RunFailed says what broke)."""
    ctx = ctx or JobContext()
    session = load_session(variant_path, config or SessionConfig())
    return _run(session, feeds_for(session, reference.feeds), ctx)


def compare(reference: Reference, outputs: dict, tolerance: Tolerance) -> dict:
    """The fidelity report of a variant's outputs against the reference's."""
    rows = []
    for name, expected in reference.outputs.items():
        if name not in outputs:
            rows.append({"name": name, "shape": None, "max_abs_diff": None, "max_rel_diff": None, "cosine": None,
                         "nonfinite": 0, "source_nonfinite": 0, "passed": False,
                         "problem": "the variant has no output of this name"})
            continue
        rows.append(compare_values(name, expected, outputs[name], tolerance))
    diffs = [r["max_abs_diff"] for r in rows if r["max_abs_diff"] is not None]
    verdicts = [r["passed"] for r in rows if r["passed"] is not None]
    return {
        "outputs": rows,
        "max_abs_diff": max(diffs) if diffs else None,
        "passed": bool(verdicts) and all(verdicts),
        "tolerance": tolerance.to_dict(),
        "dims_used": dict(reference.info.get("dims", {})),
        "inputs": list(reference.info.get("inputs", [])),
        "input_shapes": dict(reference.info.get("shapes", {})),
        "feed_mode": reference.info.get("mode"),
        "seed": reference.info.get("seed"),
    }


def failed_report(reference: Reference, tolerance: Tolerance, problem: str) -> dict:
    """A fidelity report for a variant that could not run at all."""
    report = compare(reference, {}, tolerance)
    for row in report["outputs"]:
        row["problem"] = problem
    report["passed"] = False
    report["problem"] = problem
    return report


def compare_outputs(source_path: str | os.PathLike, variant_path: str | os.PathLike,
                    feed_spec: FeedSpec | dict | None = None, tolerance: Tolerance | dict | None = None,
                    session_config: SessionConfig | dict | None = None, ctx: JobContext | None = None) -> dict:
    """Run source and variant on the same feeds and compare every output."""
    config = session_config if isinstance(session_config, SessionConfig) else (
        SessionConfig.from_dict(session_config) if session_config else SessionConfig())
    spec = feed_spec if isinstance(feed_spec, FeedSpec) else (
        FeedSpec.from_dict(feed_spec) if feed_spec else config.inputs)
    tolerance = tolerance if isinstance(tolerance, Tolerance) else Tolerance.from_dict(tolerance)
    reference = reference_run(source_path, spec, config, ctx)
    try:
        outputs = run_variant(variant_path, reference, config, ctx)
    except RunFailed as exc:
        return failed_report(reference, tolerance, f"the variant could not {exc.stage}: {exc.message}")
    return compare(reference, outputs, tolerance)
