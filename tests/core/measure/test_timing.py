"""The one timing loop: count, duration, batches, threads, cancel, and that it stays the only one."""

import ast
import threading
import time
from array import array
from collections import Counter
from pathlib import Path

import pytest

import app.core
from app.core.measure.timing import TICK_NS, split, time_loop
from app.core.jobs.errors import JobCancelled

CORE = Path(app.core.__file__).resolve().parent
LOOP_MODULE = "measure/timing.py"
#: Clock reads allowed outside the loop, per (file, function): each times one thing, not runs.
ALLOWED_CLOCK_READS = {
    ("measure/runs.py", "prepare"): 2,            # session creation
    ("session/probe.py", "run"): 2,              # a model's first run: it may be refused, its outputs are kept
    ("convert/convert.py", "convert_model"): 4,  # seconds a conversion takes, not inference runs
    ("graph/drawing.py", "picture"): 2,          # seconds a layout takes, not inference runs
    ("convert/compiled.py", "creation_times"): 2,   # session creation, compiled against not
    ("generate/loop.py", "prefill"): 2,          # a generation's prompt: one run whose outputs feed the next
    ("generate/loop.py", "step"): 2,             # a token step: each fed the last one's cache, so no loop of equal runs
    ("generate/genai_engine.py", "prefill"): 2,  # onnxruntime-genai's prompt, timed as ORTune's loop times its own
    ("generate/genai_engine.py", "step"): 2,     # and its token step
}
CLOCKS = {"perf_counter", "perf_counter_ns"}


def sleeper(seconds: float):
    calls = []

    def run() -> None:
        calls.append(1)
        time.sleep(seconds)

    return run, calls


def test_count_runs_exactly_that_many_and_times_each_one():
    run, calls = sleeper(0.001)
    timing = time_loop(run, 50)
    assert isinstance(timing.samples_ns, array) and timing.samples_ns.typecode == "q"
    assert len(timing.samples_ns) == len(calls) == 50
    assert min(timing.samples_ns) >= 1_000_000                  # the sleep is inside the clock reads
    assert timing.wall_s * 1e9 >= sum(timing.samples_ns)
    assert timing.ms() == [ns / 1e6 for ns in timing.samples_ns]
    assert len(time_loop(run, 0).samples_ns) == 0


def test_duration_runs_until_the_deadline_and_a_count_can_end_it_first():
    run, _ = sleeper(0.001)
    timing = time_loop(run, duration_s=0.25)
    # each run takes at least 1 ms, so a loop that stops at its deadline has made at most 250;
    # how soon after the deadline it stops is benchmarks/timing_deadline.py's to measure
    assert timing.wall_s >= 0.25
    assert 0 < len(timing.samples_ns) <= 250
    assert len(time_loop(run, 5, duration_s=60).samples_ns) == 5
    budgeted = time_loop(run, 10**9, duration_s=0.2)             # without the deadline this would not end
    assert 0 < len(budgeted.samples_ns) <= 200
    with pytest.raises(ValueError):
        time_loop(run)


def test_batches_come_every_tick_and_add_up_to_the_samples():
    run, _ = sleeper(0.002)
    batches = []
    timing = time_loop(run, duration_s=0.45, on_batch=lambda new: batches.append(array("q", new)))
    joined = array("q")
    for batch in batches:
        joined.extend(batch)
    assert joined == timing.samples_ns
    ticks = timing.wall_s * 1e9 / TICK_NS
    assert 3 <= len(batches) <= ticks + 2                      # by time, never one per run
    assert len(batches) < len(timing.samples_ns) / 5


def test_threads_share_the_count_and_stream_every_sample():
    calls = Counter()

    def runner(index: int):
        def run() -> None:
            calls[index] += 1
            time.sleep(0.0005)
        return run

    batches = []
    timing = time_loop([runner(i) for i in range(3)], 1001, on_batch=batches.append)
    assert split(1001, 3) == [334, 334, 333]
    assert dict(calls) == {0: 334, 1: 334, 2: 333}
    assert len(timing.samples_ns) == 1001
    assert sorted(ns for batch in batches for ns in batch) == sorted(timing.samples_ns)
    timed = time_loop([runner(0), runner(1)], duration_s=0.2)
    assert timed.wall_s >= 0.2 and len(timed.samples_ns) > 0


def test_a_failing_thread_ends_the_loop_with_its_error():
    def broken() -> None:
        raise RuntimeError("refused")

    run, _ = sleeper(0.001)
    with pytest.raises(RuntimeError, match="refused"):
        time_loop([run, broken], duration_s=600)


@pytest.mark.parametrize("threads", [1, 2])
def test_cancel_stops_a_long_loop_between_runs(threads):
    flag = threading.Event()
    runs = [sleeper(0.001)[0] for _ in range(threads)]
    threading.Timer(0.3, flag.set).start()
    with pytest.raises(JobCancelled):     # uncancelled it would run ten minutes: the test's timeout
        time_loop(runs if threads > 1 else runs[0], duration_s=600, cancelled=flag.is_set)


def test_a_run_interrupted_by_cancel_reads_as_cancelled_and_other_errors_pass_through():
    flag = threading.Event()

    def terminated() -> None:               # what a run does once RunOptions.terminate is set
        flag.set()
        raise RuntimeError("Exiting due to terminate flag being set to true.")

    with pytest.raises(JobCancelled):
        time_loop(terminated, 10, cancelled=flag.is_set)
    with pytest.raises(RuntimeError, match="terminate"):
        time_loop(terminated, 10, cancelled=lambda: False)


# only one timing loop in app/core ---------------------------------------------------------

def clock_reads(source: str) -> Counter:
    """(function name, or "" at module level) -> references to time.perf_counter(_ns) in `source`."""
    found: Counter = Counter()

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if ((isinstance(child, ast.Attribute) and child.attr in CLOCKS)
                    or (isinstance(child, ast.Name) and child.id in CLOCKS)
                    or (isinstance(child, ast.ImportFrom) and any(a.name in CLOCKS for a in child.names))):
                found[function] += 1
            visit(child, child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function)

    visit(ast.parse(source), "")
    return found


def test_the_scan_sees_a_clock_read_however_it_is_spelled():
    planted = ("import time\nfrom time import perf_counter as pc\n"
               "def loop(run):\n    clock = time.perf_counter_ns\n"
               "    def inner():\n        return time.perf_counter()\n")
    assert clock_reads(planted) == {"": 1, "loop": 1, "inner": 1}


def test_no_second_timing_loop_in_core():
    found = {}
    for path in sorted(CORE.rglob("*.py")):
        relative = path.relative_to(CORE).as_posix()
        if relative == LOOP_MODULE:
            continue
        for function, count in clock_reads(path.read_text(encoding="utf-8")).items():
            found[(relative, function)] = count
    assert found == ALLOWED_CLOCK_READS, (
        "time runs with app.core.measure.timing.time_loop; a clock read elsewhere needs a reason in ALLOWED_CLOCK_READS")
