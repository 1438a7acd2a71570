"""Running a model with ONNX Runtime's profiler on, then reading the trace it wrote.

Like every model job this runs in the job's child process. ORT names its trace itself
(prefix + date); it writes it beside the target under a hidden prefix, and the file takes
the target's name only once every run is done, so a cancelled, failed or crashed job
leaves no half trace under the user's name."""

from __future__ import annotations

import gc
import itertools
import os
import time
import traceback
from pathlib import Path

from app.core.jobs.disk import named_when_full
from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from app.core.model.intake import admit
from app.core.model.output import check_replaceable
from app.core.ort_messages import ort_text
from app.core.store import leftovers
from app.core.store.paths import data_dir
from app.core.session.config import SessionConfig
from app.core.session.load import LoadWatch
from app.core.profile.origins import remember
from app.core.profile.trace_reader import read_trace
from app.core.profile.traces import summarize

DEFAULT_RUNS = 10
MAX_RUNS = 100_000
PROGRESS_INTERVAL_S = 0.1     # a progress message per run would flood the pipe for small models


def default_trace_path(model: str | os.PathLike) -> Path:
    """Where a trace goes when no file is named: the traces folder of ORTune's data, under
    the model's name and the time (see _publish for two such names in the same second)."""
    return data_dir() / "traces" / f"{Path(model).stem}-{time.strftime('%Y%m%d-%H%M%S')}.json"


def unused_trace_path(model: str | os.PathLike) -> Path:
    """A name in the traces folder (made if need be) that no trace has yet: where a trace
    made on a target without a name is brought back to."""
    out = default_trace_path(model)
    out.parent.mkdir(parents=True, exist_ok=True)
    for number in itertools.count(1):
        candidate = out if number == 1 else out.with_name(f"{out.stem}-{number}{out.suffix}")
        if not os.path.lexists(candidate):
            return candidate


def _publish(written: str, out: Path, chosen: bool, force: bool, model: Path) -> Path:
    """Give ORT's trace its name. A name the user chose replaces a file only with `force`;
    a name ORTune made up never replaces one: two models both named model.onnx profiled in
    the same second (or one model twice) get -2, -3 … added. The name is claimed with an
    exclusive create, so two jobs at once cannot both take it."""
    if chosen:
        check_replaceable(out, force, (model,))     # nothing took its place while it ran
        os.replace(written, out)
        return out
    for number in itertools.count(1):
        candidate = out if number == 1 else out.with_name(f"{out.stem}-{number}{out.suffix}")
        try:
            os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        except FileExistsError:
            continue
        os.replace(written, candidate)
        return candidate


def check_target(out: Path, force: bool, model: Path) -> None:
    if out.suffix.lower() != ".json":
        raise UserError("bad-option", f"{out}: a trace file name ends in .json")
    check_replaceable(out, force, (model,))


def _make_runner(session, feeds: dict, config: SessionConfig, run_options):
    if not config.io_binding:
        return lambda: session.run(None, feeds, run_options)
    binding = session.io_binding()
    for name, array in feeds.items():
        binding.bind_cpu_input(name, array)
    for output in session.get_outputs():
        binding.bind_output(output.name)
    return lambda: session.run_with_iobinding(binding, run_options)


def _run_profiled(model: Path, config: SessionConfig, runs: int, prefix: Path, ctx: JobContext) -> tuple[str, dict]:
    """Create the session, run it `runs` times; returns (ORT's trace file, session facts)."""
    import onnxruntime as ort

    from app.core.session.create import create_session, effective_settings
    from app.core.session.probe import prepare_feeds

    def enable_profiling(options) -> None:
        options.enable_profiling = True
        options.profile_file_prefix = str(prefix)

    ctx.progress(None, "creating the session")
    session = create_session(model, config, customize=enable_profiling)
    # The first profiled run finds the inputs (see probe.py); the trace holds any it refused.
    first = prepare_feeds(model, session, config.inputs, ctx)
    feeds, feed_info = first.feeds, first.info
    if len(first.tried) > 1:
        ctx.log(f"the trace also holds {len(first.tried) - 1} refused run(s) of the input probe", "warning")
    run_options = ort.RunOptions()
    run = _make_runner(session, feeds, config, run_options)
    remove_hook = ctx.on_cancel(lambda: setattr(run_options, "terminate", True))
    reported = time.monotonic()
    try:
        for index in range(1, runs):
            ctx.check_cancel()
            try:
                run()
            except Exception as exc:  # ORT raises its own types; a terminate shows up here too
                ctx.check_cancel()
                raise UserError("run-failed", f"{model.name}: run {index + 1} failed: "
                                              f"{ort_text(str(exc))}") from None
            if time.monotonic() - reported >= PROGRESS_INTERVAL_S or index + 1 == runs:
                reported = time.monotonic()
                ctx.progress(0.8 * (index + 1) / runs, f"run {index + 1} of {runs}")
    finally:
        remove_hook()
    facts = {"session": effective_settings(session, config), "session_providers": session.get_providers(),
             "feeds": feed_info, "inputs": feed_info["inputs"]}
    return session.end_profiling(), facts


def _written(prefix: Path) -> int:
    """The bytes of the trace written so far (what a full disk took, at least)."""
    return sum(stray.stat().st_size for stray in prefix.parent.glob(prefix.name + "*") if stray.is_file())


def _remove_partial(prefix: Path) -> None:
    for stray in prefix.parent.glob(prefix.name + "*"):
        stray.unlink(missing_ok=True)


def profile_model_job(params, ctx: JobContext) -> dict:
    """params: ProfileParams (app.core.profile.jobs). Returns the trace's profile plus the
    session it ran with."""
    model = admit(params.model).path
    config = params.session
    runs = DEFAULT_RUNS if params.runs is None else params.runs
    if not 1 <= runs <= MAX_RUNS:
        raise UserError("bad-option", f"the number of profiled runs must be 1 to {MAX_RUNS:,}, not {runs}")
    out = Path(params.out).absolute() if params.out else default_trace_path(model)
    if params.out:
        check_target(out, params.force, model)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError("not-writable", f"{out.parent}: cannot create the folder ({exc.strerror})") from None
    prefix = out.parent / f".{out.stem}.{os.getpid()}.profiling"
    try:
        with leftovers.noted(prefix), named_when_full(out.parent, lambda: _written(prefix)):
            watch = LoadWatch()
            written, facts = _run_profiled(model, config, runs, prefix, ctx)
            facts["load"] = watch.stop().to_dict()
            out = _publish(written, out, bool(params.out), params.force, model)
    except BaseException as exc:
        # ORT writes the trace when the session goes away: let it go, then remove what it wrote.
        traceback.clear_frames(exc.__traceback__)
        gc.collect()
        _remove_partial(prefix)
        raise

    remember(out, model)

    def progress(fraction: float) -> None:
        ctx.check_cancel()
        ctx.progress(0.8 + 0.18 * fraction, "reading the trace")

    result = summarize(read_trace(out, progress), params.include_first_run, params.with_timeline)
    result.update({"model": str(model), **facts})
    for warning in result["warnings"]:
        ctx.log(warning, "warning")
    ctx.progress(1.0, "done")
    return result
