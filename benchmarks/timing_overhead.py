"""Per-run cost the timing loop adds, as bench, tuning and IO binding call it.

One process, one session of a one-node model (Add of a 1x4 tensor, so the loop's own
cost is as visible as it can be). Each round times, in one order that flips every
round, N runs of: a bare `for` loop calling the run callable, bench's `measure()`,
tuning's `measure_block()` in blocks of 10, and IO binding's `measure()` (rounds of 10
over one plain mode, against a bare loop over the same step). A path's overhead in a
round is (its time - the bare loop's) / N, the cost outside the clock reads; the JSON object printed gives the median
over rounds and the quartiles, in nanoseconds per run. Time is this process's CPU time
(the session has one thread and nothing sleeps), so other work on a shared machine
spreads the numbers less than wall time would. "in_sample_ns" is the other half: the
median sample each path records for a run that does nothing, i.e. what the clock reads
and the call add to every sample.

    python benchmarks/timing_overhead.py [--rounds 21] [--runs 20000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    import numpy as np
    import onnxruntime as ort

    from app.core.measure.runs import RunSettings, make_run, measure
    from app.core.iobinding import iobinding
    from app.core.iobinding.modes import plan_modes
    from app.core.jobs.protocol import JobContext
    from app.core.session.config import SessionConfig
    from app.core.tune.tune import make_runner, measure_block
    from tests import models

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--runs", type=int, default=20_000)
    args = parser.parse_args()
    n = args.runs - args.runs % 10

    with tempfile.TemporaryDirectory() as folder:
        path = models.save(models.tiny_add(), Path(folder) / "one_node.onnx")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feeds = {"x": np.ones((1, 4), np.float32)}
    ctx = JobContext()
    run = make_run(session, feeds, ort.RunOptions())
    runner = make_runner(session, feeds, SessionConfig(), ctx)
    references = session.run(None, feeds)
    plan = plan_modes("cpu")[0]
    step, _ = iobinding.prepare(plan, session, feeds, references, ort.RunOptions())

    def bare(fn=run) -> None:
        for _ in range(n):
            fn()

    paths = {
        "bare": bare,
        "bench": lambda: measure(session, feeds, RunSettings(warmup=0, iterations=n), ctx),
        "tune": lambda: [measure_block(runner, 10, ctx) for _ in range(n // 10)],
        "bare_step": lambda: bare(step),
        "iobinding": lambda: iobinding.measure([iobinding.ModeRun(plan, step)], n, ctx, iobinding._Progress(ctx)),
    }
    for work in paths.values():        # warm up every path once
        work()
    seconds = {name: [] for name in paths}
    for index in range(args.rounds):
        order = list(paths) if index % 2 == 0 else list(reversed(paths))
        for name in order:
            started = time.process_time()
            paths[name]()
            seconds[name].append(time.process_time() - started)

    def noop() -> None:
        pass

    from app.core.measure import runs as bench
    real_make_run, bench.make_run = bench.make_run, lambda *args, **kwargs: noop
    try:
        bench_noop = measure(session, feeds, RunSettings(warmup=0, iterations=n), ctx).samples_ms()
    finally:
        bench.make_run = real_make_run
    noop_mode = iobinding.ModeRun(plan, noop)
    iobinding.measure([noop_mode], n, ctx, iobinding._Progress(ctx))
    in_sample_ns = {"bench": float(np.median(bench_noop)) * 1e6,
                    "tune": statistics.median(measure_block(noop, 10, ctx) for _ in range(n // 10)) * 1e6,
                    "iobinding": statistics.median(noop_mode.samples) * 1e6}

    def overhead(name: str, against: str) -> dict:
        per_round = sorted((a - b) / n * 1e9 for a, b in zip(seconds[name], seconds[against]))
        q1, median, q3 = statistics.quantiles(per_round, n=4) if len(per_round) > 1 else per_round * 3
        return {"median": round(median, 1), "q1": round(q1, 1), "q3": round(q3, 1),
                "min": round(per_round[0], 1), "max": round(per_round[-1], 1)}

    print(json.dumps({
        "benchmark": "timing_overhead", "model": "one Add node, input 1x4 float32, CPU, 1 thread",
        "clock": "process CPU time",
        "rounds": args.rounds, "runs": n,
        "bare_ns_per_run": round(statistics.median(seconds["bare"]) / n * 1e9, 1),
        "overhead_ns_per_run": {"bench": overhead("bench", "bare"), "tune": overhead("tune", "bare"),
                                "iobinding": overhead("iobinding", "bare_step")},
        "in_sample_ns": {name: round(value, 1) for name, value in in_sample_ns.items()},
    }))


if __name__ == "__main__":
    main()
