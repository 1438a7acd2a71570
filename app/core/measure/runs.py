"""Latency benchmark: create the session, time the first run, warm up, then measure.

`measure()` times the warm-up and the measured runs with `timing.time_loop`, the one
timing loop every measuring job uses, and streams the samples to `on_batch` in the
batches the loop hands out, about ten times a second, never once per run.
"""

from __future__ import annotations

import gc
import time
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.core.measure.timing import time_loop
from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.jobs.protocol import JobContext
from app.core.session.load import LoadWatch
from app.core.session.fields import THREADS_PER_CORE_LIMIT, thread_limit
from app.core.session.providers import GPU_PROVIDERS

PROGRESS_NS = 250_000_000       # say how far it is every 250 ms
OnBatch = Callable[[str, bytes], None]   # phase ("warmup" | "measure"), int64 ns as bytes
#: the longest measurement: a week (a longer one is a typo, and past 2^63 ns the clock overflows)
LONGEST_S = 7 * 24 * 3600.0
CONCURRENCY_WHY = (f"more than {THREADS_PER_CORE_LIMIT} threads for each core of this machine would only wait on "
                   "each other")


@dataclass
class RunSettings(Params):
    """How a benchmark runs: warm-up, then a count of runs or a duration, on K threads. The one
    description of each run setting: its default, limits, flag and words, which the command
    line's flags (app.cli.param_args) and the window's run form (app.gui.widgets.run_form) are
    made from."""
    warmup: int = setting(10, minimum=0, flag="--warmup", metavar="N", label="Warm-up runs",
                          help="Runs before measuring: caches, lazy allocations and provider start-up settle here.")
    iterations: int = setting(200, minimum=1, flag="--iterations", metavar="N", label="Runs", help="Measured runs.")
    duration_s: float | None = setting(None, minimum=0.001, maximum=LONGEST_S, flag="--duration", metavar="SECONDS",
                                       label="Duration", help="Measure for this long instead of a count of runs.")
    concurrency: int = setting(1, minimum=1, maximum=thread_limit(), why=CONCURRENCY_WHY, flag="--concurrency",
                               metavar="K", label="Concurrency",
                               help="Threads sharing one session, each running back to back: shows throughput "
                                    "under load (latency usually rises).")


@dataclass
class Measurement:
    warmup_ns: array
    samples_ns: array
    wall_s: float
    concurrency: int

    def warmup_ms(self):
        import numpy as np
        return np.frombuffer(self.warmup_ns, dtype=np.int64) / 1e6

    def samples_ms(self):
        import numpy as np
        return np.frombuffer(self.samples_ns, dtype=np.int64) / 1e6

    def summary(self) -> dict:
        from app.core.measure.stats import latency_stats, throughput_per_s
        samples = self.samples_ms()
        return {"latency_ms": latency_stats(samples), "iterations": int(samples.size),
                "throughput_per_s": throughput_per_s(samples, self.concurrency, self.wall_s),
                "measure_s": self.wall_s, "concurrency": self.concurrency}


def io_device(provider_names: list[str]) -> str:
    """Where IO binding puts tensors for the first (preferred) provider."""
    first = provider_names[0] if provider_names else "CPUExecutionProvider"
    if first in ("CUDAExecutionProvider", "TensorrtExecutionProvider"):
        return "cuda"
    if first == "DmlExecutionProvider":
        return "dml"
    return "cpu"


def make_run(session, feeds: dict, run_options, io_binding: bool = False, device_id: int = 0) -> Callable[[], object]:
    """A zero-argument callable doing exactly one inference, as cheap to call as possible."""
    import functools
    import onnxruntime as ort

    if not io_binding:
        names = [o.name for o in session.get_outputs()]
        return functools.partial(session.run, names, feeds, run_options)
    device = io_device(session.get_providers())
    # ORT 1.31 looks this entry up on every bound run and pays for a raised exception when it
    # is missing (tens of microseconds); 0 is its default value.
    run_options.add_run_config_entry("gpu_graph_id", "0")
    binding = session.io_binding()
    for name, value in feeds.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(value, device, device_id))
    for output in session.get_outputs():
        binding.bind_output(output.name, device, device_id)
    return functools.partial(session.run_with_iobinding, binding, run_options)


def time_runs(session, feeds: dict, count: int, budget_s: float, ctx: JobContext | None = None) -> list[float]:
    """Milliseconds of up to `count` plain runs, cut short once `budget_s` has passed
    (the quick timings of a diagnosis, without warm-up or streaming); cancelling `ctx` stops them."""
    import onnxruntime as ort

    ctx = ctx or JobContext()
    run_options = ort.RunOptions()
    remove_hook = ctx.on_cancel(lambda: setattr(run_options, "terminate", True))
    try:
        return time_loop(make_run(session, feeds, run_options), count, budget_s,
                         cancelled=lambda: ctx.cancelled).ms()
    finally:
        remove_hook()


class _Streamer:
    """Sends each batch of samples, and the progress."""

    def __init__(self, on_batch: OnBatch | None, ctx: JobContext, settings: RunSettings):
        self.on_batch, self.ctx, self.settings = on_batch, ctx, settings
        self.done = 0
        self.started = time.monotonic_ns()    # reset when measuring starts
        self.last_progress = 0

    def __call__(self, phase: str, new: array, final: bool = False) -> None:
        if len(new) and self.on_batch is not None:
            self.on_batch(phase, new.tobytes())
        if phase != "measure":
            return
        self.done += len(new)
        now = time.monotonic_ns()
        if final or now - self.last_progress >= PROGRESS_NS:
            self.last_progress = now
            if self.settings.duration_s:
                fraction = (now - self.started) / 1e9 / self.settings.duration_s
            else:
                fraction = self.done / self.settings.iterations
            self.ctx.progress(min(fraction, 1.0), f"{self.done:,} runs")


def measure(session, feeds: dict, settings: RunSettings, ctx: JobContext | None = None,
            on_batch: OnBatch | None = None, io_binding: bool = False, device_id: int = 0) -> Measurement:
    """Warm up, then time runs of `session` (K threads sharing it when concurrency > 1).

    Cancel (from `ctx`) sets RunOptions.terminate so even a long run stops."""
    import onnxruntime as ort

    ctx = ctx or JobContext()
    settings.validate()
    run_options = ort.RunOptions()
    remove_hook = ctx.on_cancel(lambda: setattr(run_options, "terminate", True))
    stream = _Streamer(on_batch, ctx, settings)

    def cancelled() -> bool:
        return ctx.cancelled

    gc_was_enabled = gc.isenabled()
    # As timeit does: a collector pause is the harness's cost, not the model's.
    gc.collect()
    gc.disable()
    try:
        runs = [make_run(session, feeds, run_options, io_binding, device_id) for _ in range(settings.concurrency)]
        ctx.progress(0.0, f"{settings.warmup} warm-up runs")
        warm = time_loop(runs[0], settings.warmup, cancelled=cancelled,
                         on_batch=lambda new: stream("warmup", new)).samples_ns
        count = None if settings.duration_s else settings.iterations
        stream.started = time.monotonic_ns()
        timing = time_loop(runs, count, settings.duration_s, cancelled=cancelled,
                           on_batch=lambda new: stream("measure", new))
        stream("measure", array("q"), final=True)
    finally:
        if gc_was_enabled:
            gc.enable()
        remove_hook()
    return Measurement(warm, timing.samples_ns, timing.wall_s, settings.concurrency)


@dataclass
class Prepared:
    """A model ready to be timed: its session and feeds, and what happened on the way."""
    summary: dict
    session: object
    feeds: dict
    feed_info: dict
    create_ms: float
    first_ns: int
    extra: dict            # what on_first_outputs added
    tried: list            # the inputs refused before these ran (the probe's attempts)

    def device_id(self, config) -> int:
        return int(config.providers[0].options.get("device_id", 0) or 0)


def prepare(path, config, ctx: JobContext | None = None, *,
            on_first_outputs: Callable[[dict, dict], dict] | None = None,
            require_dims: tuple[str, ...] = ()) -> Prepared:
    """Create the session, make the feeds, time the first run.

    `on_first_outputs(feeds, outputs)` sees the first run's results and returns fields
    to add to the report; `require_dims` names symbolic dims the model must have."""
    from app.core.model.inspect import inspect_model
    from app.core.session.create import create_session
    from app.core.session.probe import prepare_feeds

    ctx = ctx or JobContext()
    summary = inspect_model(path)
    ctx.check_cancel()
    ctx.progress(None, "creating the session")
    started = time.perf_counter_ns()
    session = create_session(summary["path"], config)
    create_ms = (time.perf_counter_ns() - started) / 1e6
    ctx.check_cancel()
    ctx.progress(None, "first run")
    first = prepare_feeds(path, session, config.inputs, ctx)
    feeds, feed_info, first_ns = first.feeds, first.info, first.run_ns
    missing = [name for name in require_dims if name not in feed_info["dims"]]
    if missing:
        have = ", ".join(feed_info["dims"]) or "none"
        raise UserError("bad-option", f"{Path(summary['path']).name} has no symbolic dimension named "
                                      f"{', '.join(missing)} (its symbolic dimensions: {have})")
    output_names = [o.name for o in session.get_outputs()]
    extra = on_first_outputs(feeds, dict(zip(output_names, first.outputs))) if on_first_outputs else {}
    first.outputs = None
    return Prepared(summary, session, feeds, feed_info, create_ms, first_ns, extra,
                    [attempt.to_dict() for attempt in first.tried[:-1]])


def bench_report(prepared: Prepared, config, settings: RunSettings, measurement: Measurement) -> dict:
    """The benchmark report (see the bench JSON contract) of a prepared model's measurement."""
    import onnxruntime as ort

    from app.core.session.machine import describe_machine, gpu_memory_bytes, peak_rss_bytes
    from app.core.session.create import effective_settings
    from app.core.session.plugins import session_devices

    session, feed_info = prepared.session, prepared.feed_info
    gpu_bytes = gpu_memory_bytes() if set(session.get_providers()) & GPU_PROVIDERS else None
    preset = effective_settings(session, config)
    preset["inputs"]["dims"] = {**config.inputs.dims, **feed_info["dims"]}   # the values used, so --config repeats them
    return {
        "model": {"path": prepared.summary["path"], "size_bytes": prepared.summary["total_bytes"]},
        "variant": "",
        **measurement.summary(),
        "warmup": settings.warmup,
        "session_create_ms": prepared.create_ms,
        "first_run_ms": prepared.first_ns / 1e6,
        "warmup_ms": measurement.warmup_ms().tolist(),
        "peak_rss_bytes": peak_rss_bytes(),
        "gpu_memory_bytes": gpu_bytes,
        "providers": session.get_providers(),
        "devices": session_devices(session),
        "session": preset,
        "run": settings.to_dict(),
        "inputs": feed_info["inputs"],
        "input_dims": feed_info["dims"],
        "inputs_guessed": feed_info["guessed"],
        "inputs_tried": prepared.tried,
        **({"decoder": feed_info["decoder"]} if "decoder" in feed_info else {}),
        "ort_version": ort.__version__,
        "machine": describe_machine(),
        "created": time.time(),
        **prepared.extra,
    }


def benchmark(path, config, settings: RunSettings, ctx: JobContext | None = None, *,
              on_batch: OnBatch | None = None,
              on_first_outputs: Callable[[dict, dict], dict] | None = None,
              require_dims: tuple[str, ...] = ()) -> tuple[dict, Measurement]:
    """The whole benchmark of one model: (report, measurement). See `prepare` for the options."""
    prepared = prepare(path, config, ctx, on_first_outputs=on_first_outputs, require_dims=require_dims)
    if on_batch is not None:
        on_batch("first", array("q", [prepared.first_ns]).tobytes())
    watch = LoadWatch()
    measurement = measure(prepared.session, prepared.feeds, settings, ctx, on_batch, config.io_binding,
                          prepared.device_id(config))
    load = watch.stop().to_dict()
    return bench_report(prepared, config, settings, measurement) | {"load": load}, measurement
