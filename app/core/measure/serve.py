"""The child's side of a comparison in alternation (app.core.measure.alternate): a member that
has made its session and feeds warms up, says it is ready, then times the blocks of runs
the parent asks for until it says stop."""

from __future__ import annotations

import gc
from array import array

import numpy as np

from app.core.measure.runs import Measurement, Prepared, RunSettings, make_run
from app.core.measure.noise import BlockLoad, single_threaded
from app.core.measure.timing import time_loop
from app.core.jobs.protocol import JobContext

READY, BLOCK = "ready", "block"      # the data a member sends: it is warm; a block's samples


def serve_blocks(prepared: Prepared, config, settings: RunSettings, ctx: JobContext) -> Measurement:
    """Warm up, say READY, then time the blocks the parent asks for until it says stop.

    READY carries the rough time per run and the process's peak resident memory so far.
    Returns every block's samples as one Measurement (wall time: the blocks' sum)."""
    import onnxruntime as ort

    from app.core.session.machine import peak_rss_bytes

    run_options = ort.RunOptions()
    remove_hook = ctx.on_cancel(lambda: setattr(run_options, "terminate", True))
    runs = [make_run(prepared.session, prepared.feeds, run_options, config.io_binding, prepared.device_id(config))
            for _ in range(settings.concurrency)]

    def cancelled() -> bool:
        return ctx.cancelled

    samples, wall_s = array("q"), 0.0
    gc_was_enabled = gc.isenabled()
    # As timeit does: a collector pause is the harness's cost, not the model's. Off for the
    # whole service, not collected per block: a full collection in a process holding ORT and
    # numpy takes about 10 ms, a pause that would lengthen every round.
    gc.collect()
    gc.disable()
    try:
        warm = time_loop(runs[0], settings.warmup, cancelled=cancelled).samples_ns
        run_ns = float(np.median(warm)) if len(warm) else float(prepared.first_ns)
        ctx.data(READY, {"run_ms": run_ns / 1e6, "rss_bytes": peak_rss_bytes()})
        cpu = single_threaded(prepared.session, config, settings)
        while "block" in (command := ctx.receive()):
            load = BlockLoad()
            timing = time_loop(runs[0] if cpu else runs, command["block"], cancelled=cancelled, cpu=cpu)
            figures = load.finish(command["block"], timing.wall_s)
            samples.extend(timing.samples_ns)
            wall_s += timing.wall_s
            ctx.data(BLOCK, {"ns": timing.samples_ns.tobytes(), "wall_s": timing.wall_s, "load": figures,
                             "cpu_ns": timing.cpu_ns.tobytes() if cpu else None})
    finally:
        if gc_was_enabled:
            gc.enable()
        remove_hook()
    return Measurement(warm, samples, wall_s, settings.concurrency)


