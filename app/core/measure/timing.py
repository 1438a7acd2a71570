"""The one timing loop: every job that measures runs (bench, and through it compare
and sweep; tuning; IO binding; diagnosis) times them with `time_loop`.

Per run it does only this: read a monotonic nanosecond clock, call the run, read the
clock again, append the difference to a flat int64 array. Everything else (handing
out batches, the cancel check, the deadline) waits for a tick, about every 100 ms,
never once per run. What one run is belongs to the caller: a plain `session.run`, a
`run_with_iobinding`, a mode with bound or preallocated values, a CUDA graph replay.
Comparisons in alternation (tuning's blocks against the pacer, IO binding's rounds
over its modes, compare's members in app.core.measure.alternate) stay with their callers,
which call the loop once per block.

This module is the only place in app/core that reads `time.perf_counter*` around
runs; tests/core/bench/test_timing.py keeps it so.
"""

from __future__ import annotations

import itertools
import threading
import time
from array import array
from dataclasses import dataclass
from typing import Callable, Sequence

from app.core.jobs.errors import JobCancelled

TICK_NS = 100_000_000          # batches, cancel and deadline are looked at every 100 ms
Run = Callable[[], object]
OnBatch = Callable[[array], None]   # the int64 ns samples taken since the previous batch


@dataclass
class Timing:
    samples_ns: array   # array("q"): one int64 per run, in nanoseconds (thread after thread)
    wall_s: float       # from just before the first run to just after the last one
    cpu_ns: array | None = None   # with cpu=True: the calling thread's CPU time of each run (ns)

    def ms(self) -> list[float]:
        return [ns / 1e6 for ns in self.samples_ns]


def split(total: int, parts: int) -> list[int]:
    """`total` runs shared by `parts` threads as evenly as they go."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def time_loop(run: Run | Sequence[Run], count: int | None = None, duration_s: float | None = None, *,
              cancelled: Callable[[], bool] | None = None, on_batch: OnBatch | None = None,
              cpu: bool = False) -> Timing:
    """Time `count` runs, or runs for `duration_s` seconds; with both, whichever ends first.

    `run` is one zero-argument callable, or a list of them: more than one run at once,
    one thread each, sharing the count. `on_batch(new)` gets the samples gathered since
    its last call at every tick and once at the end. When `cancelled()` turns true
    (looked at every tick, and when a run raises, as RunOptions.terminate makes it)
    the loop raises JobCancelled.

    With `cpu` (one run callable and a `count` only), each run's CPU time on this thread is
    read too (`Timing.cpu_ns`): what a single-threaded run cost, without the time the
    scheduler had it off its core (app.core.measure.noise)."""
    if count is None and duration_s is None:
        raise ValueError("time_loop needs a count or a duration")
    if cpu:
        return _cpu_loop(run, count, cancelled)
    runs = list(run) if isinstance(run, (list, tuple)) else [run]
    clock = time.perf_counter_ns
    started = clock()
    deadline = started + int(duration_s * 1e9) if duration_s is not None else None
    parts = [array("q") for _ in runs]
    sent = _Sent(parts, on_batch) if on_batch is not None else None
    try:
        if len(runs) == 1:
            _loop(runs[0], count, deadline, cancelled, parts[0], sent)
        else:
            _threads(runs, parts, count, deadline, cancelled, sent)
    except Exception:
        if cancelled is not None and cancelled():
            raise JobCancelled() from None
        raise
    wall_s = (clock() - started) / 1e9
    if cancelled is not None and cancelled():
        raise JobCancelled()
    if sent is not None:
        sent()
    samples = parts[0]
    for part in parts[1:]:
        samples.extend(part)
    return Timing(samples, wall_s)


class _Sent:
    """Hands `on_batch` what the arrays gained since the last call."""

    def __init__(self, parts: list[array], on_batch: OnBatch):
        self.parts, self.on_batch = parts, on_batch
        self.counts = [0] * len(parts)

    def __call__(self) -> None:
        new = array("q")
        for index, part in enumerate(self.parts):
            count = len(part)
            new.extend(part[self.counts[index]:count])
            self.counts[index] = count
        self.on_batch(new)


def _loop(run: Run, count: int | None, deadline: int | None, stop: Callable[[], bool] | None,
          samples: array, on_tick: Callable[[], None] | None) -> None:
    """Run `count` times (or until the deadline or `stop()`); append each run's ns to `samples`."""
    clock = time.perf_counter_ns
    append = samples.append
    next_tick = clock() + TICK_NS
    if deadline is not None:
        next_tick = min(next_tick, deadline)
    for _ in (range(count) if count is not None else itertools.repeat(None)):
        start = clock()
        run()
        end = clock()
        append(end - start)
        if end >= next_tick:
            if on_tick is not None:
                on_tick()
            if (stop is not None and stop()) or (deadline is not None and end >= deadline):
                return
            next_tick = end + TICK_NS
            if deadline is not None:
                next_tick = min(next_tick, deadline)


def _cpu_loop(run: Run, count: int, cancelled: Callable[[], bool] | None) -> Timing:
    """`count` runs of `run`, each timed on the wall clock and on this thread's CPU clock."""
    clock, cpu_clock = time.perf_counter_ns, time.thread_time_ns
    samples, cpu_ns = array("q"), array("q")
    started = clock()
    next_tick = started + TICK_NS
    try:
        for _ in range(count):
            start, cpu_start = clock(), cpu_clock()
            run()
            cpu_end, end = cpu_clock(), clock()
            samples.append(end - start)
            cpu_ns.append(cpu_end - cpu_start)
            if end >= next_tick:
                if cancelled is not None and cancelled():
                    raise JobCancelled()
                next_tick = end + TICK_NS
    except Exception:
        if cancelled is not None and cancelled():
            raise JobCancelled() from None
        raise
    return Timing(samples, (clock() - started) / 1e9, cpu_ns)


def _threads(runs: list[Run], parts: list[array], count: int | None, deadline: int | None,
             cancelled: Callable[[], bool] | None, on_tick: Callable[[], None] | None) -> None:
    """One thread per run callable, each filling its part; this thread only hands out batches."""
    counts = split(count, len(runs)) if count is not None else [None] * len(runs)
    halt = threading.Event()
    errors: list[BaseException] = []

    def stop() -> bool:
        return halt.is_set() or (cancelled is not None and cancelled())

    def work(index: int) -> None:
        try:
            _loop(runs[index], counts[index], deadline, stop, parts[index], None)
        except BaseException as exc:  # handed to the calling thread, which raises it
            errors.append(exc)
            halt.set()

    threads = [threading.Thread(target=work, args=(i,), name=f"ortune-run-{i}", daemon=True)
               for i in range(len(runs))]
    for thread in threads:
        thread.start()
    while True:
        alive = [t for t in threads if t.is_alive()]
        if not alive:
            break
        alive[0].join(TICK_NS / 1e9)
        if on_tick is not None:
            on_tick()
    if errors:
        raise errors[0]
