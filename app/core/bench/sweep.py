"""Sweep: one model over a grid of a symbolic dimension's values (batch 1, 2, 4 …)
and concurrency levels, the cells measured in alternation against the first one.

The answer a user wants is usually "the most throughput whose latency I can still
accept": with a latency limit, the best cell under it is named. Throughput counts items:
runs per second times the swept dimension's value (images a second for a batch sweep,
tokens a second for a sequence sweep); without a dimension, items are runs.

Cells are compared with one another, so they must meet the same machine: each cell is a
process of its own (its session, its inputs, its threads), kept alive and told when to
run its next block (app.core.measure.alternate). A cell holds a session, so not every cell
is alive at once. The first cell is the reference and stays alive the whole sweep; the
others come in groups, each group measured in rounds together with the reference and
then stopped before the next group starts. A group takes cells while fewer than
`max_processes` are alive (the reference included) and while the largest cell started
so far (its peak resident memory once warm), taken as the size of the next one, fits in
MEMORY_SHARE of the memory available now (which already leaves out what the alive cells
hold); a small model's grid thus runs as one group. Every cell's ratio is against that one reference process, in rounds
that ran back to back, so ratios of cells in different groups chain through it
(`pair_ratio`).

A decoder's step counts tokens instead (app.core.bench.sweep_tokens): a past-length sweep's
cells each make one token per sequence a run, so its best is the fastest per token.

A cell's ratio is its throughput in items per second over the reference's: per round,
items per block / the block's wall time, for both; the ratio of the two, as the median
over rounds, with a 95 % bootstrap interval over rounds and compare's verdict rule. A
cell with concurrency K runs its blocks on K threads sharing its session, so its
throughput is what K callers get, and the ratio answers "which batch (or concurrency)
moves the most items" directly. Blocks of a cell last about as long as the slowest
cell's, so every cell meets spells of the machine of the same length."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from app.core.measure.alternate import (MIN_BLOCK_RUNS, Alternation, Ensemble, OnEvent, plan_blocks, run_rounds)
from app.core.measure.runs import RunSettings
from app.core.measure.stats import BOOTSTRAP_RESAMPLES, bootstrap_median_ci
from app.core.verdict import PRACTICAL_BAND, judge_speed
from app.core.jobs.entry import Job
from app.core.jobs.errors import JobCancelled, UserError
from app.core.jobs.params import Params
from app.core.jobs.protocol import JobContext

LIMIT_PERCENTILES = ("p50", "p90", "p95", "p99")
MAX_PROCESSES = 4          # cells alive at once, the reference included
MEMORY_SHARE = 0.5         # a group grows while its next cell fits in this share of the memory available
RATIO_DEFINITION = ("ratio = items per second of the cell / items per second of the first cell, as the median "
                    "over rounds of the ratio of their block throughputs (items per block / block wall time); "
                    "above 1: the cell moves more items per second")
#: the first cell's ratio, against itself
REFERENCE_RATIO = {"ratio": 1.0, "ratio_ci": [1.0, 1.0], "verdict": "reference"}


def best_cell(cells: list[dict], limit_ms: float | None, percentile: str = "p99") -> dict | None:
    """The cell with the most items per second whose latency percentile is within the limit.

    Cells are ranked by their ratio to the first cell (the alternation's median over
    rounds), not by items_per_s over all their blocks, which one slow spell can move; the
    two rank alike but for cells too close to tell apart."""
    allowed = [c for c in cells if limit_ms is None or c["latency_ms"][percentile] <= limit_ms]
    return max(allowed, key=lambda c: c["ratio"], default=None)


def runner_up(cells: list[dict], best: dict, limit_ms: float | None, percentile: str = "p99") -> dict | None:
    """The cell best_cell would name if `best` were not there."""
    return best_cell([c for c in cells if c is not best], limit_ms, percentile)


def parse_values(text: str, what: str) -> list[int]:
    """'1,2,4,8' -> [1, 2, 4, 8] (whole numbers ≥ 1, in the order given, no repeats)."""
    values = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise UserError("bad-option", f"{what} values must be whole numbers ≥ 1, not {part!r}")
        if int(part) not in values:
            values.append(int(part))
    if not values:
        raise UserError("bad-option", f"{what} needs at least one value")
    return values


@dataclass
class GridCell:
    """What one cell's blocks gave: its report, its group, and per round its throughput
    (items/s) and the reference's in the same round."""
    report: dict | None = None
    group: int = 0
    throughput: list[float] = field(default_factory=list)
    reference_throughput: list[float] = field(default_factory=list)

    def ratios(self) -> np.ndarray:
        return np.asarray(self.throughput) / np.asarray(self.reference_throughput)


@dataclass
class Grid:
    cells: list[GridCell]
    groups: list[list[int]]
    plans: list[dict]


def _room_for_another(ensemble: Ensemble, alive: int, max_processes: int) -> bool:
    import psutil

    if alive >= max_processes:
        return False
    largest = max((ready.get("rss_bytes") or 0) for ready in ensemble.ready.values())
    return largest <= MEMORY_SHARE * psutil.virtual_memory().available


def _throughputs(result: Alternation, indices: list[int], items: list[int]) -> list[list[float]]:
    """Per position in the group, its items per second in each round."""
    return [[items[i] * len(b) / w for b, w in zip(result.blocks[p], result.walls[p])] for p, i in enumerate(indices)]


def measure_grid(job: Job, members: list[Params], items: list[int], concurrency: list[int], settings: RunSettings,
                 ctx: JobContext, on_event: OnEvent | None = None, max_processes: int = MAX_PROCESSES,
                 on_group: Callable[[Grid, list[int]], None] | None = None,
                 on_partial: Callable[[list[int], Alternation, list[GridCell]], None] | None = None) -> Grid:
    """Measure `members` (one `job` that calls serve_blocks per cell, the first the
    reference) in alternation, in groups (see the module docstring). `items[i]` is what
    one run of cell i handles, `concurrency[i]` its threads.

    `on_group(grid, group)`: a group's cells are done (their reports are in the grid).
    Cancelling raises JobCancelled after `on_partial(indices, rounds, cells)` got the group
    being measured, if it had whole rounds: its cells' indices (the reference first), those
    rounds, and a GridCell per position with the rounds' throughputs."""
    grid = Grid([GridCell() for _ in members], [], [])
    with Ensemble(job, ctx, on_event) as ensemble:
        ensemble.start(0, members[0])
        waiting = list(range(1, len(members)))
        while True:
            group: list[int] = []
            while waiting and (not group or _room_for_another(ensemble, len(group) + 1, max_processes)):
                index = waiting.pop(0)
                ensemble.start(index, members[index])
                group.append(index)
            indices = [0, *group]
            slowest = max(ensemble.run_ms[i] for i in indices)
            plan = plan_blocks(settings, slowest, len(indices))

            def block_runs(index: int) -> int:
                own = ensemble.run_ms[index]
                fill = plan.block_runs * slowest / own if own > 0 else plan.block_runs
                return max(MIN_BLOCK_RUNS, round(fill)) * concurrency[index]

            result = Alternation(plan, [], [[] for _ in indices], [[] for _ in indices])
            try:
                run_rounds(ensemble, indices, plan, result, block_runs)
            except JobCancelled:
                whole = result.whole_rounds()
                if on_partial is not None and whole.rounds:
                    rates = _throughputs(whole, indices, items)
                    on_partial(indices, whole, [GridCell(None, len(grid.groups), rate, rates[0]) for rate in rates])
                raise
            throughputs = _throughputs(result, indices, items)
            for position, index in enumerate(indices):
                cell = grid.cells[index]
                cell.throughput += throughputs[position]
                cell.reference_throughput += throughputs[0]
                if index:
                    cell.group = len(grid.groups)
                    cell.report = ensemble.stop(index)
            grid.groups.append(group)
            grid.plans.append(plan.to_dict() | {"rounds_run": result.rounds})
            if on_group is not None:
                on_group(grid, group)
            if not waiting:
                break
        grid.cells[0].report = ensemble.stop(0)
    return grid


def report_figures(report: dict, group: int) -> dict:
    """What a sweep's row shows of a cell's report."""
    return {"latency_ms": report["latency_ms"], "throughput_per_s": report["throughput_per_s"],
            "iterations": report["iterations"], "peak_rss_bytes": report["peak_rss_bytes"],
            "gpu_memory_bytes": report["gpu_memory_bytes"],
            "input_shapes": {row["name"]: row["shape"] for row in report["inputs"]}, "inputs": report["inputs"],
            "group": group}


def sweep_cell(value: int | None, concurrency: int, figures: dict, ratio: dict,
               step: tuple[int, int] | None = None) -> dict:
    """A sweep's row: where in the grid, the figures (report_figures, or a stopped group's
    Alternation.figures), items per second, and the ratio against the first cell. For a
    decoder's step (`step`: batch, new tokens; see sweep_tokens) the items are the tokens a
    run makes, and the row says its tokens per second and its latency per new token."""
    if step is None:
        return {"dim_value": value, "concurrency": concurrency, **figures,
                "items_per_s": figures["throughput_per_s"] * (value or 1), **ratio}
    batch, new = step
    tokens = figures["throughput_per_s"] * batch * new
    per_token = {key: figures["latency_ms"][key] / new for key in LIMIT_PERCENTILES}
    return {"dim_value": value, "concurrency": concurrency, **figures, "items_per_s": tokens, "tokens_per_s": tokens,
            "tokens_per_run": batch * new, "per_token_ms": per_token, **ratio}


def items_unit(dim: str | None, cells: list[dict]) -> str:
    """What a sweep's items per second count: tokens for a decoder's step, else the swept
    dimension's items, else runs."""
    if cells and "tokens_per_s" in cells[0]:
        return "tokens/s"
    return f"{dim} items/s" if dim else "runs/s"


def cell_ratio(cell: GridCell, band: float = PRACTICAL_BAND, seed: int = 0) -> dict:
    """The cell's ratio against the reference, with interval and verdict."""
    ratios = cell.ratios()
    low, high = bootstrap_median_ci(ratios, seed=seed)
    ratio = float(np.median(ratios))
    return {"ratio": ratio, "ratio_ci": [low, high], "verdict": judge_speed(ratio, low, high, band=band).verdict,
            "rounds": int(ratios.size)}


def pair_ratio(grid: Grid, a: int, b: int, band: float = PRACTICAL_BAND, seed: int = 0) -> dict:
    """Cell a's throughput over cell b's, with a 95 % interval and a verdict.

    Measured together (the same group, or either the reference): the median over their
    shared rounds of the per-round ratio, bootstrapped over rounds. In different groups:
    chained through the reference, median(a / reference) / median(b / reference), with
    each group's rounds resampled on their own."""
    one, two = grid.cells[a], grid.cells[b]
    if a == 0 or b == 0 or one.group == two.group:
        if a == 0:
            ratios = 1.0 / two.ratios()
        elif b == 0:
            ratios = one.ratios()
        else:
            ratios = np.asarray(one.throughput) / np.asarray(two.throughput)
        low, high = bootstrap_median_ci(ratios, seed=seed)
        ratio = float(np.median(ratios))
        return {"ratio": ratio, "ci": [low, high], "verdict": judge_speed(ratio, low, high, band=band).verdict,
                "how": "measured together"}
    first, second = one.ratios(), two.ratios()
    rng = np.random.default_rng(seed)
    medians_a = np.median(first[rng.integers(0, first.size, (BOOTSTRAP_RESAMPLES, first.size))], axis=1)
    medians_b = np.median(second[rng.integers(0, second.size, (BOOTSTRAP_RESAMPLES, second.size))], axis=1)
    low, high = (float(v) for v in np.percentile(medians_a / medians_b, [2.5, 97.5]))
    if not (math.isfinite(low) and math.isfinite(high)):
        low, high = -math.inf, math.inf
    ratio = float(np.median(first) / np.median(second))
    return {"ratio": ratio, "ci": [low, high], "verdict": judge_speed(ratio, low, high, band=band).verdict,
            "how": "chained through the first cell"}


def check_swept_dim(path: str, dim: str | None) -> None:
    """Refuse a swept dimension the model does not have, read from its structure here: before
    a run on a target or a cluster connects (the measuring job checks it again). A model that
    cannot be read here (an .ort file, a damaged one) is left to the job to judge."""
    if not dim or not str(path).lower().endswith(".onnx"):
        return
    from app.core.model.intake import load_onnx
    from app.core.model.value_type import describe_value
    from app.core.session.input_plan import dim_label

    try:
        graph = load_onnx(Path(path), weights=False).graph
    except (UserError, OSError):
        return
    weights = {tensor.name for tensor in graph.initializer}
    labels = []
    for value in graph.input:
        if value.name not in weights:
            item = describe_value(value)
            labels += [label for index, d in enumerate(item["shape"] or [])
                       if (label := dim_label(item["name"], index, d)) and label not in labels]
    if dim not in labels:
        raise UserError("bad-option", f"{Path(path).name} has no symbolic dimension named {dim} "
                                      f"(its symbolic dimensions: {', '.join(labels) or 'none'})")
