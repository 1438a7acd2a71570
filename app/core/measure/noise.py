"""What a busy machine does to a comparison in alternation, and what the statistics do about it.

Measured per block, by the member that ran it (`BlockLoad`):
- the times its process was switched out against its will (involuntary context switches):
  when other processes want the cores too, the scheduler takes the member off its core for
  a few milliseconds, and the run it was in takes that much longer in wall time though it
  did no more work. Each switch lands in one run, and a model whose runs are longer is hit
  in more of them: measured on a machine with twice as many runnable processes as cores,
  8.6 % of a model's runs and 16.8 % of those of one twice its size were; the more of a
  block's runs are hit, the further its median moves up, the longer model's furthest, and
  the gap between two models widens;
- its CPU share (the process's CPU time over the block's wall time; about 1 for a
  single-threaded run alone on a core) and the other processes' CPU during the block, in
  cores (from /proc/stat, less its own): reported, so a result says how busy it was.

A single-threaded run (the CPU provider, one intra-op thread, sequential, one run at a
time: `single_threaded`) also reads its thread's CPU clock around each run, and the
speedup is then judged on those CPU times: the work each run did on its core, which a wait
for the core does not lengthen (on a quiet machine the two agree within a percent:
wall / CPU 0.995 per run). Otherwise, on wall time:

What the statistics do (`trimmed`, `clean_rounds`, `run_length`, stats.median_ratio):
- each block is judged on its lower part: less its slowest runs, as many as its process was
  switched out (a switch is a wait of milliseconds, longer than a run's own spread, so the
  runs it hit are the slowest): the median of the runs no other process interrupted;
- a round where a member was switched out in more than MAX_HIT of its block's runs is set
  aside (too little of the block is left to tell): both blocks of it, so what remains
  stays paired. When fewer than CLEAN_NEEDED of the rounds (or fewer than MIN_ROUNDS) are
  left, the machine was busy: every round is judged, and the verdict widens the interval by
  the share of disturbed rounds (app.core.verdict) instead of giving up;
- a busy spell lasts for many rounds (a neighbour's build, a core that comes and goes for
  tens of seconds), so rounds next to each other are alike and are not independent
  evidence: the interval resamples runs of consecutive rounds (a moving-block bootstrap),
  as long as the per-round ratios stay correlated (`run_length`), and is never narrower
  than the spread of those ratios allows for the rounds' effective number (stats).
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

MAX_HIT = 0.5              # a block switched out in more than this fraction of its runs was disturbed
CLEAN_NEEDED = 0.5         # fewer undisturbed rounds than this fraction: too busy to tell


def _busy_cpu_s() -> float | None:
    """Seconds of CPU all processes have used since boot (Linux /proc/stat), or None elsewhere."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = [int(value) for value in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")   # less idle and iowait


def single_threaded(session, config, settings) -> bool:
    """Whether a run does all its work on the calling thread, so its CPU time is its cost:
    only the CPU provider, one intra-op thread, sequential execution, one run at a time."""
    return (list(session.get_providers()) == ["CPUExecutionProvider"] and config.intra_op_num_threads == 1
            and config.execution_mode == "sequential" and settings.concurrency == 1)


def _switches() -> int | None:
    """Involuntary context switches of this process so far (None where getrusage is missing)."""
    try:
        import resource
    except ImportError:      # Windows
        return None
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw)


class BlockLoad:
    """Started just before a block, `finish(runs, wall_s)` just after: the block's load figures."""

    def __init__(self):
        self.cpu_s, self.busy_s, self.switches = time.process_time(), _busy_cpu_s(), _switches()

    def finish(self, runs: int, wall_s: float) -> dict:
        cpu_s = time.process_time() - self.cpu_s
        busy, switches = _busy_cpu_s(), _switches()
        others = None
        if busy is not None and self.busy_s is not None and wall_s > 0:
            others = max(0.0, (busy - self.busy_s - cpu_s) / wall_s)
        return {"runs": runs, "switches": None if switches is None else switches - self.switches,
                "cpu_share": cpu_s / wall_s if wall_s > 0 else None, "others_cores": others}


def _hit(load: dict, runs: int) -> int:
    """How many of a block's `runs` runs its process's switches can have landed in."""
    switches = load.get("switches")
    return min(int(switches), runs) if switches else 0


def trimmed(block: np.ndarray, load: dict) -> np.ndarray:
    """The block less its slowest runs, as many as its process was switched out during it."""
    cut = _hit(load, block.size)
    return np.sort(block)[:block.size - cut] if cut and cut < block.size else block


def disturbed(loads: list[list[dict]], sizes: list[list[int]]) -> np.ndarray:
    """Per round: whether a member was switched out in more than MAX_HIT of its block's runs.
    `loads[member][round]`, `sizes[member][round]` (the block's runs); a block whose load
    has no switches (an older member, another system) disturbs nothing."""
    rounds = min((len(member) for member in loads), default=0)
    out = np.zeros(rounds, dtype=bool)
    for member, counts in zip(loads, sizes):
        for index, (load, runs) in enumerate(zip(member[:rounds], counts[:rounds])):
            out[index] |= _hit(load, runs) > MAX_HIT * runs
    return out


def clean_rounds(loads: list[list[dict]], sizes: list[list[int]], min_rounds: int) -> tuple[np.ndarray, bool]:
    """(the indices of the rounds to judge on, whether the machine was too busy to tell).

    Undisturbed rounds when there are enough of them; otherwise every round, flagged too busy."""
    bad = disturbed(loads, sizes)
    keep = np.flatnonzero(~bad)
    if bad.size and (keep.size < min_rounds or keep.size < CLEAN_NEEDED * bad.size):
        return np.arange(bad.size), True
    return (keep if bad.size else np.arange(0)), False


def run_length(log_ratios: np.ndarray) -> int:
    """How many consecutive rounds the moving-block bootstrap keeps together: the first lag at
    which the per-round log ratios' autocorrelation falls below 2/sqrt(n) (where neighbours
    stop looking alike), at least n^(1/3), at most n/3."""
    n = int(log_ratios.size)
    if n < 6:
        return 1
    centred = log_ratios - log_ratios.mean()
    variance = float(centred @ centred)
    floor = max(1, math.ceil(n ** (1 / 3)))
    cap = max(1, n // 3)
    if variance <= 0:
        return min(floor, cap)
    threshold = 2.0 / math.sqrt(n)
    for lag in range(1, cap + 1):
        if float(centred[:-lag] @ centred[lag:]) / variance < threshold:
            return min(max(lag, floor), cap)
    return cap


def summary(loads: list[list[dict]], kept: np.ndarray, too_busy: bool) -> dict:
    """What a result says about the machine's load during the rounds."""
    shares = [[load["cpu_share"] for load in member if load.get("cpu_share") is not None] for member in loads]
    others = [load["others_cores"] for member in loads for load in member if load.get("others_cores") is not None]
    hits = [[_hit(load, load.get("runs") or 0) / load["runs"] for load in member if load.get("runs")]
            for member in loads]
    rounds = min((len(member) for member in loads), default=0)
    return {"rounds_judged": int(kept.size), "rounds_set_aside": int(rounds - kept.size) if not too_busy else 0,
            "too_busy": too_busy,
            "cpu_share_p50": [float(np.median(s)) if s else None for s in shares],
            "switched_out_runs": [float(np.mean(h)) if h else None for h in hits],
            "others_cores_p50": float(np.median(others)) if others else None,
            "rule": f"each block less its slowest runs, as many as its process was switched out; a round where a "
                    f"model was switched out in more than {MAX_HIT:.0%} of a block's runs is set aside; with fewer "
                    f"than {CLEAN_NEEDED:.0%} of the rounds left, the machine was busy: every round is judged and "
                    f"the interval is widened by the share of disturbed rounds"}
