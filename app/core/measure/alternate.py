"""Candidates measured in alternation: each in its own process, kept alive, told by the
parent when to run its next block of runs.

Why: two models timed one after the other meet different machines (a browser wakes, the
CPU clock drops, a neighbour starts a build), and the difference lands in the ratio.
Timed in short blocks taking turns, both meet the same spells, so the ratio of their
medians over all blocks holds what differs between them, not what slowed both alike.

The child side (app.core.measure.serve.serve_blocks, called by a member job after it has made its session and
feeds) warms up, says it is ready with a rough time per run, then waits for commands:
{"block": n} times n runs (shared by K threads for a concurrency of K) and answers with
their samples and the block's wall time, {"stop": true} ends it.
The parent side (`alternate`) starts the members one after another, each once the one
before is ready (the reference writes the feeds the others read), then runs rounds: in
each, every member runs one block, one member at a time, in an order rotated every round
so none always goes first. `summarize` turns the blocks into speedups with intervals and
verdicts (see app.core.measure.stats).

All members stay alive, and hold their models in memory, until the comparison ends
(`alternate`), or, run in several sets of fresh processes (app.core.measure.pairs), until
their set's rounds end; `Ensemble` and `run_rounds` let a caller start and stop members between
rounds instead (a sweep's groups, app.core.bench.sweep).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from app.core.measure.runs import RunSettings
from app.core.measure.noise import clean_rounds, disturbed, trimmed
from app.core.measure.noise import summary as load_summary
from app.core.measure.stats import BOOTSTRAP_RESAMPLES, latency_stats, median_ratio, throughput_per_s
from app.core.verdict import PRACTICAL_BAND, RULE, judge_speed
from app.core.measure.pairs import Pairs, pairs_ratio
from app.core.measure.serve import BLOCK, READY
from app.core.jobs.entry import Job
from app.core.jobs.errors import JobCancelled, JobFailed
from app.core.jobs.params import Params
from app.core.jobs.protocol import JobContext

BLOCK_S = 0.1                        # a block lasts about this long for the slowest member
MIN_BLOCK_RUNS = 5                   # a median of fewer runs is too easily one outlier
MIN_ROUNDS = 10                      # fewer ratios give no useful interval
SPEEDUP_DEFINITION = ("speedup = reference p50 / model p50, each p50 over all the runs of its blocks; the 95 % "
                      "interval resamples runs of consecutive whole rounds; in each round every model runs one "
                      "block, in turn, in a rotated order; rounds where a model's process waited for a core are "
                      "set aside")

OnEvent = Callable[[int, str, dict], None]   # (member index, kind, payload) of a member's progress and log


@dataclass
class BlockPlan:
    """How long a comparison runs: `rounds` rounds, or rounds until `budget_s` seconds have
    passed (and at least `min_rounds`); every block is `block_runs` runs. With `extend_s`, a
    budgeted comparison whose intervals do not answer yet (stats.conclusive) goes on for up
    to that many seconds more."""
    block_runs: int
    rounds: int | None = None
    budget_s: float | None = None
    min_rounds: int = MIN_ROUNDS
    extend_s: float = 0.0

    def done(self, rounds: int, elapsed_s: float, answered: Callable[[], bool] | None = None) -> bool:
        if self.rounds is not None:
            return rounds >= self.rounds
        if rounds < self.min_rounds or elapsed_s < self.budget_s:
            return False
        if answered is None or elapsed_s >= self.budget_s + self.extend_s:
            return True
        return answered()

    def to_dict(self) -> dict:
        return {"block_runs": self.block_runs, "rounds": self.rounds, "budget_s": self.budget_s,
                "min_rounds": self.min_rounds, "extend_s": self.extend_s}


def plan_blocks(settings: RunSettings, run_ms: float, members: int, min_rounds: int = MIN_ROUNDS,
                extend_s: float = 0.0) -> BlockPlan:
    """The rounds and block size for `settings`, given the slowest member's time per run.

    A block is the runs that fill BLOCK_S (at least MIN_BLOCK_RUNS). With `iterations`,
    each member runs about that many in all: the block shrinks to iterations / MIN_ROUNDS
    (never below MIN_BLOCK_RUNS) and the rounds are as many as the iterations need (at
    least MIN_ROUNDS). With `duration_s`, which is per member, rounds go on until all
    members together have had members × duration_s seconds, and at least `min_rounds`:
    the blocks shrink so that many fit in the budget (a short budget gets more, shorter
    rounds rather than too few to give an interval)."""
    if settings.duration_s:
        block_s = min(BLOCK_S, settings.duration_s / min_rounds)
        filling = int(block_s * 1000.0 / run_ms) if run_ms > 0 else MIN_BLOCK_RUNS
        return BlockPlan(max(MIN_BLOCK_RUNS, filling), budget_s=settings.duration_s * members,
                         min_rounds=min_rounds, extend_s=extend_s)
    filling = int(BLOCK_S * 1000.0 / run_ms) if run_ms > 0 else MIN_BLOCK_RUNS
    block = max(MIN_BLOCK_RUNS, filling)
    block = max(MIN_BLOCK_RUNS, min(block, settings.iterations // MIN_ROUNDS))
    return BlockPlan(block, rounds=max(MIN_ROUNDS, math.ceil(settings.iterations / block)))


def round_order(members: int, round_index: int) -> list[int]:
    """The order the members run their blocks in, in round `round_index`: rotated by one
    every round, so over `members` rounds each has been in every place once (with two,
    they swap every round)."""
    shift = round_index % members
    return list(range(shift, members)) + list(range(shift))


# the parent's side ---------------------------------------------------------------
@dataclass
class Alternation:
    """What `alternate` gathered: per member its report (latency and throughput of all its
    blocks), its blocks (ms) in round order, each block's wall time (s) and load (noise.BlockLoad)."""
    plan: BlockPlan
    reports: list[dict]
    blocks: list[list[np.ndarray]] = field(default_factory=list)
    walls: list[list[float]] = field(default_factory=list)
    loads: list[list[dict]] = field(default_factory=list)
    pairs: list[int] = field(default_factory=list)     # per round, the set of processes it ran in (pairs.Pairs)

    def __post_init__(self):
        if len(self.loads) < len(self.blocks):
            self.loads = [list(loads) for loads in self.loads] + [[] for _ in self.blocks[len(self.loads):]]

    @property
    def rounds(self) -> int:
        return len(self.blocks[0]) if self.blocks else 0

    def whole_rounds(self) -> "Alternation":
        """Only the rounds every member finished (a cancel can stop one in the middle of a round)."""
        rounds = min((len(blocks) for blocks in self.blocks), default=0)
        return Alternation(self.plan, [], [blocks[:rounds] for blocks in self.blocks],
                           [walls[:rounds] for walls in self.walls], [loads[:rounds] for loads in self.loads],
                           self.pairs[:rounds])

    def judged(self, min_rounds: int = MIN_ROUNDS) -> tuple[np.ndarray, bool]:
        """(the rounds the speedups are judged on, whether the machine was too busy to tell): noise.clean_rounds;
        every round when they are judged on CPU time, which a wait for a core does not lengthen."""
        rounds = self.rounds
        if not self.loads or any(len(loads) < rounds for loads in self.loads) or self.on_cpu():
            return np.arange(rounds), False
        return clean_rounds([loads[:rounds] for loads in self.loads],
                            [[len(block) for block in blocks[:rounds]] for blocks in self.blocks],
                            min(min_rounds, self.plan.min_rounds))

    def contention(self, kept: np.ndarray) -> float:
        """The share of rounds `kept` disturbed (noise.disturbed): the verdict's widening (app.core.verdict)."""
        rounds = self.rounds
        if not kept.size or not self.loads or any(len(loads) < rounds for loads in self.loads):
            return 0.0
        bad = disturbed([loads[:rounds] for loads in self.loads],
                        [[len(block) for block in blocks[:rounds]] for blocks in self.blocks])
        return float(bad[kept].mean()) if bad.size else 0.0

    def on_cpu(self) -> bool:
        """Whether every block of every member carries its runs' CPU times (noise.single_threaded)."""
        rounds = self.rounds
        return bool(rounds) and all(len(loads) >= rounds and all("cpu_ms" in load for load in loads[:rounds])
                                    for loads in self.loads)

    def lower_part(self, position: int, kept: np.ndarray) -> list[np.ndarray]:
        """Member `position`'s blocks of the rounds `kept` as the speedup judges them: their
        runs' CPU times where every member has them (on_cpu), else each block less the runs
        its process was switched out in (noise.trimmed); as they are without load figures."""
        blocks, loads = self.blocks[position], self.loads[position]
        if self.on_cpu():
            return [loads[i]["cpu_ms"] for i in kept]
        return [trimmed(blocks[i], loads[i]) if i < len(loads) else blocks[i] for i in kept]

    def judged_p50_ms(self, position: int) -> float:
        """Member `position`'s median over the runs summarize judges the speedups on (its CPU
        times or its trimmed blocks, of the rounds judged kept): the figure a speedup is the
        ratio of, so a result that prints it beside the speedup agrees with itself."""
        kept, _ = self.judged()
        part = self.lower_part(position, kept)
        return float(np.median(np.concatenate(part))) if part else float("nan")

    def figures(self, position: int) -> dict:
        """Latency and throughput of one member's blocks so far: a stopped run's partial figures."""
        blocks = self.blocks[position]
        samples = np.concatenate(blocks) if blocks else np.zeros(0)
        return {"latency_ms": latency_stats(samples), "iterations": int(samples.size),
                "throughput_per_s": throughput_per_s(samples, wall_s=sum(self.walls[position]))}

    def pair_of_rounds(self, kept: np.ndarray) -> list[int] | None:
        """The set of processes each of the rounds `kept` ran in, when they ran in more than one."""
        labels = [self.pairs[i] for i in kept] if len(self.pairs) >= self.rounds else []
        return labels if len(set(labels)) > 1 else None

    def describe(self, band: float = PRACTICAL_BAND, pairs: Pairs | None = None) -> dict:
        """How it was measured and judged, for a result to say."""
        kept, too_busy = self.judged()
        loads = load_summary(self.loads, kept, too_busy) if self.loads and all(self.loads) else None
        return self.plan.to_dict() | {
            "rounds_run": self.rounds, "load": loads, "pairs_run": len(set(self.pairs)) or 1,
            **({"pairs": pairs.to_dict()} if pairs is not None else {}), "confidence": 0.95, "bootstrap_resamples": BOOTSTRAP_RESAMPLES,
            "practical_band": band, "contention": self.contention(kept), "verdict_rule": RULE}


def _wait_for(handle, kind: str, on_event: Callable[[str, dict], None]) -> dict:
    """Drive `handle` until its member sends data of `kind`; its other events go to on_event."""
    for event, payload in handle.events():
        if event == "data" and payload["kind"] == kind:
            return payload["payload"]
        on_event(event, payload)
    if handle.error is not None:
        raise handle.error
    raise JobFailed("internal", f"a member of the comparison ended before it sent its {kind}")


class Ensemble:
    """Members started one by one and kept alive until stopped, which can be told to run a
    block at any time: `alternate` starts them all at once; a sweep keeps its reference
    alive while groups of other cells come and go (app.core.bench.sweep).

    Use it as a context manager: leaving it cancels every member not yet stopped (a
    failure or a cancel of one ends the others)."""

    def __init__(self, job: Job, ctx: JobContext, on_event: OnEvent | None = None):
        self.job, self.ctx, self.on_event = job, ctx, on_event
        self.handles: dict[int, object] = {}
        self.run_ms: dict[int, float] = {}
        self.ready: dict[int, dict] = {}          # what each member said when it was warm
        self._removes: dict[int, Callable[[], None]] = {}

    def _forward(self, index: int) -> Callable[[str, dict], None]:
        on_event = self.on_event
        return lambda kind, payload: on_event(index, kind, payload) if on_event else None

    def start(self, index: int, params: Params) -> float:
        """Start member `index` and wait until it is warm; returns its rough time per run (ms)."""
        from app.core.runner.process import JobHandle

        self.ctx.check_cancel()
        handle = JobHandle(self.job, params).start()
        self.handles[index] = handle
        self._removes[index] = self.ctx.on_cancel(handle.cancel)
        self.ready[index] = _wait_for(handle, READY, self._forward(index))
        self.run_ms[index] = self.ready[index]["run_ms"]
        return self.run_ms[index]

    def block(self, index: int, runs: int) -> tuple[np.ndarray, float, dict]:
        """Member `index` times `runs` runs now: (their ms, the block's wall time in s, its load)."""
        self.handles[index].send({"block": runs})
        block = _wait_for(self.handles[index], BLOCK, self._forward(index))
        load = dict(block.get("load") or {})
        if block.get("cpu_ns"):
            load["cpu_ms"] = np.frombuffer(block["cpu_ns"], dtype=np.int64) / 1e6
        return np.frombuffer(block["ns"], dtype=np.int64) / 1e6, float(block["wall_s"]), load

    def stop(self, index: int) -> dict:
        """Member `index` stops serving; returns its report."""
        handle = self.handles.pop(index)
        handle.send({"stop": True})
        try:
            return handle.wait(self._forward(index))
        finally:
            self._removes.pop(index)()

    def __enter__(self) -> "Ensemble":
        return self

    def __exit__(self, *exc) -> None:
        for remove in self._removes.values():
            remove()
        for handle in self.handles.values():
            if not handle.done:
                handle.cancel()
                try:
                    handle.wait()
                except Exception:  # ending the others after one failed: their errors say nothing new
                    pass


def run_rounds(ensemble: Ensemble, members: list[int], plan: BlockPlan, result: Alternation,
               block_runs: Callable[[int], int] | None = None, pair: int = 0, sets: int = 1) -> None:
    """Rounds as `plan` asks (counted from the rounds `result` has already), in each one
    block of every member of `members` (ensemble indices), one at a time, in round_order;
    the blocks go to `result` under the position of each member in `members`, each round
    noted as run in set `pair`. `block_runs(index)` is a member's block size (default:
    the plan's). Progress is the whole alternation's (set `pair` of `sets` planned fills its
    share); rounds or sets past the plan have no known end: indeterminate, never a full bar."""
    ctx = ensemble.ctx
    started, first = time.monotonic(), len(result.blocks[0])

    def answered() -> bool:
        return all(row["conclusive"] for row in summarize(result)[1:])

    while not plan.done(len(result.blocks[0]) - first, time.monotonic() - started,
                        answered if plan.extend_s else None):
        ctx.check_cancel()
        for position in round_order(len(members), len(result.blocks[0])):
            index = members[position]
            samples, wall_s, load = ensemble.block(index, block_runs(index) if block_runs else plan.block_runs)
            result.blocks[position].append(samples)
            result.walls[position].append(wall_s)
            result.loads[position].append(load)
        result.pairs.append(pair)
        rounds = len(result.blocks[0]) - first
        elapsed = time.monotonic() - started
        fraction = rounds / plan.rounds if plan.rounds else min(elapsed / plan.budget_s, rounds / plan.min_rounds)
        more = plan.budget_s is not None and elapsed > plan.budget_s and rounds >= plan.min_rounds
        whole = None if more or pair >= sets else (pair + min(fraction, 1.0)) / sets
        # a full bar only when the job ends: after the planned rounds may come more, or another set
        ctx.progress(None if whole is not None and whole >= 1.0 else whole,
                     (f"pair {pair + 1}{'' if pair < sets else ' (one more, to narrow the interval)'}, "
                      if pair else "")
                     + f"round {rounds} of {plan.rounds or 'as many as fit'}"
                     + (", more rounds to narrow the interval" if more else ""))


def alternate(job: Job, members: list[Params], settings: RunSettings, ctx: JobContext,
              on_event: OnEvent | None = None,
              on_partial: Callable[[Alternation], None] | None = None, *,
              min_rounds: int = MIN_ROUNDS, extend_s: float = 0.0, pairs: Pairs | None = None) -> Alternation:
    """Run `job` (one that calls serve_blocks) once per entry of `members`, the first being
    the reference, and measure them in alternation as `settings` asks (see plan_blocks,
    which takes `min_rounds` and `extend_s`); with `pairs`, that many times in fresh
    processes, `settings` being each set's (app.core.measure.pairs).

    Cancelling `ctx` cancels every member and raises JobCancelled, after handing the whole
    rounds measured so far, if any, to `on_partial`; a member's failure ends the others
    and is raised."""
    return run_alternation(job, members, ctx, on_event, on_partial,
                           lambda run_ms, _result: plan_blocks(settings, run_ms, len(members), min_rounds, extend_s),
                           pairs)


def run_alternation(job: Job, members: list[Params], ctx: JobContext, on_event: OnEvent | None,
                    on_partial: Callable[[Alternation], None] | None,
                    make_plan: Callable[[float, Alternation], BlockPlan], pairs: Pairs | None = None) -> Alternation:
    """Start every member, plan the blocks with `make_plan(slowest run's ms, the result being
    gathered)` and run rounds to the plan's end; with `pairs`, again in fresh processes, the
    same plan each time, as long as pairs.again says (each member's report is then its
    first process's, with the figures of all its blocks). A cancel hands the whole rounds
    so far to `on_partial` and is raised."""
    pairs = pairs or Pairs()
    result = Alternation(None, [], [[] for _ in members], [[] for _ in members], [[] for _ in members])
    started, reports = time.monotonic(), []
    while not reports or pairs.again(result, len(reports), time.monotonic() - started):
        with Ensemble(job, ctx, on_event) as ensemble:
            run_ms = [ensemble.start(index, params) for index, params in enumerate(members)]
            result.plan = result.plan or make_plan(max(run_ms), result)
            try:
                run_rounds(ensemble, list(range(len(members))), result.plan, result, pair=len(reports),
                           sets=pairs.first)
            except JobCancelled:
                if on_partial is not None and result.whole_rounds().rounds:
                    on_partial(result.whole_rounds())
                raise
            reports.append([ensemble.stop(index) for index in range(len(members))])
    result.reports = reports[0] if len(reports) == 1 else [
        _merged([own[position] for own in reports], result.figures(position)) for position in range(len(members))]
    return result


def _merged(reports: list[dict], figures: dict) -> dict:
    """One member's report over several processes: the first's, with the figures of all the
    blocks, the highest peak memory and how many processes it ran in."""
    peaks = [report.get("peak_rss_bytes") for report in reports if report.get("peak_rss_bytes")]
    return reports[0] | figures | {"peak_rss_bytes": max(peaks) if peaks else reports[0].get("peak_rss_bytes"),
                                   "processes": len(reports)}


def summarize(result: Alternation, reference: int = 0, band: float = PRACTICAL_BAND, seed: int = 0) -> list[dict]:
    """Per member: speedup against the reference (the reference's p50 over the member's, as
    their reports print them: stats.median_ratio), its 95 % bootstrap interval over rounds,
    the verdict (app.core.verdict.judge_speed: `conclusive` unless it could not tell,
    `claim`, `widened_ci`, `why`) and the rounds. Only the rounds where no member waited for
    a core count (Alternation.judged); when too few are left, every round counts and the row
    is flagged `too_busy`. When the rounds ran in more than one set of processes, the
    interval is the pair-level one (pairs.pairs_ratio) and the row has each set's speedup
    (`pair_speedups`). The reference's own row is speedup 1, interval [1, 1], verdict "reference"."""
    kept, too_busy = result.judged()
    measure, contention = "cpu" if result.on_cpu() else "wall", result.contention(kept)   # the same for every row
    rows = []
    for index, blocks in enumerate(result.blocks):
        if index == reference:
            rows.append({"speedup": 1.0, "speedup_ci": [1.0, 1.0], "verdict": "reference", "conclusive": True,
                         "rounds": len(blocks)})
            continue
        labels = result.pair_of_rounds(kept)
        own = {}
        if labels is None:
            speedup, low, high = median_ratio(result.lower_part(reference, kept), result.lower_part(index, kept),
                                              seed=seed)
        else:
            speedup, low, high, each = pairs_ratio(result.lower_part(reference, kept), result.lower_part(index, kept),
                                                   labels, seed=seed)
            own = {"pair_speedups": each}
        judged = judge_speed(speedup, low, high, contention, measure, band)
        row = {"speedup": speedup, "speedup_ci": [low, high], **judged.to_dict(), "conclusive": judged.answered,
               "rounds": len(blocks), "rounds_judged": int(kept.size), "too_busy": too_busy}
        row["measure"] = measure
        rows.append(row | own)
    return rows
