"""The measuring jobs: a benchmark; a comparison of several models, each in a process of its
own with the same session and inputs, timed in alternation; a sweep over a grid, each cell
in a process of its own, timed in alternation against the first cell."""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.core.measure.alternate import SPEEDUP_DEFINITION, alternate, summarize
from app.core.measure.pairs import Pairs, per_pair
from app.core.measure.serve import serve_blocks
from app.core.bench.sweep_tokens import decoder_steps
from app.core.bench.generation import generation_phases, generation_report, in_phase
from app.core.measure.runs import RunSettings, bench_report, benchmark, prepare
from app.core.bench.compare import (FEEDS_FILE, OUTPUTS_FILE, PLAN_FILE, compare_row, output_fidelity, partial_row,
                                   shared_inputs)
from app.core.bench.sweep import (LIMIT_PERCENTILES, MAX_PROCESSES, RATIO_DEFINITION, REFERENCE_RATIO, best_cell,
                                  cell_ratio, items_unit, measure_grid, pair_ratio, report_figures, runner_up,
                                  sweep_cell)
from app.core.jobs.entry import ANYWHERE, Job, LOCAL_ONLY, ON_TARGET, Records
from app.core.session.fidelity_policy import file_precision, for_precisions
from app.core.verdict import RULE
from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.jobs.protocol import JobContext
from app.core.jobs.results import BenchResult, CompareResult, SweepResult
from app.core.session.config import SessionConfig
from app.core.session.fidelity_policy import GivenTolerance


@dataclass
class BenchParams(Params):
    path: str
    session: SessionConfig = setting(factory=SessionConfig)
    run: RunSettings = setting(factory=RunSettings)
    variant: str = ""
    record: bool = True                                    # keep the result in the history
    require_dims: list[str] = setting(factory=list)        # dims that must be symbolic (a sweep's)


@dataclass
class MemberParams(BenchParams):
    reference_dir: str = ""                                 # where the reference keeps feeds and outputs
    is_reference: bool = False
    tolerance: GivenTolerance = setting(factory=GivenTolerance)   # of the output check
    output_tolerance: dict[str, dict[str, float]] = setting(factory=dict)   # per output name, over `tolerance`


COMPARE_PAIRS = 4


@dataclass
class CompareParams(Params):
    models: list[dict[str, str]]                            # [{path, label}], the first is the reference
    session: SessionConfig = setting(factory=SessionConfig)
    run: RunSettings = setting(factory=RunSettings)         # shared among the first pairs
    record: bool = True
    pairs: int = setting(COMPARE_PAIRS, minimum=1, maximum=1000, flag="--pairs", metavar="N",
                         help="sets of fresh processes to measure in first")
    max_seconds: float = setting(60.0, minimum=1, flag="--max-seconds", metavar="S",
                                 help="while an interval cannot answer, more sets while one fits in this many seconds "
                                      "of measuring, starts included")

    def validate(self) -> None:
        if len(self.models) < 2:
            raise UserError("bad-option", "a comparison needs at least two models")
        if any("path" not in model for model in self.models):
            raise UserError("bad-option", "each model of a comparison needs its path")


@dataclass
class SweepParams(Params):
    path: str
    session: SessionConfig = setting(factory=SessionConfig)
    run: RunSettings = setting(factory=RunSettings)
    dim: str | None = None                                  # the swept symbolic dimension, or none
    dim_values: list[int] = setting(factory=list)
    concurrency_values: list[int] = setting(factory=lambda: [1])
    latency_limit_ms: float | None = setting(None, minimum=0, flag="--latency-limit")
    limit_percentile: str = setting("p99", choices=LIMIT_PERCENTILES)
    max_processes: int = setting(MAX_PROCESSES, minimum=2)   # cells alive at once, the first included
    record: bool = True

    def validate(self) -> None:
        if self.dim and not self.dim_values:
            raise UserError("bad-option", f"give the values of {self.dim} to sweep")
        if any(v < 1 for v in self.dim_values + self.concurrency_values) or not self.concurrency_values:
            raise UserError("bad-option", "swept values must be whole numbers ≥ 1")


def bench_job(params: BenchParams, ctx: JobContext) -> dict:
    """Streams ("latency", {"phase", "ns"}) data batches; a result to keep carries its
    latencies for the history's chart."""
    from app.core.store.history import SAMPLES_KEY

    def on_batch(phase: str, ns: bytes) -> None:
        ctx.data("latency", {"phase": phase, "ns": ns})

    report, measurement = benchmark(params.path, params.session, params.run, ctx, on_batch=on_batch,
                                    require_dims=tuple(params.require_dims))
    report["variant"] = params.variant
    if params.record:
        report[SAMPLES_KEY] = {"warmup_ms": measurement.warmup_ms(), "samples_ms": measurement.samples_ms()}
    return report


def member_job(params: MemberParams, ctx: JobContext) -> dict:
    """One model of a comparison, in its own process, kept alive: it makes its session and
    feeds, then times the blocks the comparison asks for (alternate.serve_blocks). The
    reference saves its feeds and outputs; every later member runs on those feeds and
    measures its outputs against them."""
    from app.core.session.input_spec import FeedSpec
    from app.core.session.inputs import load_by_position, save_arrays, save_by_position

    folder = Path(params.reference_dir)
    config = params.session
    data_spec = config.inputs if config.inputs.data else None
    if params.is_reference:
        def on_first_outputs(feeds: dict, outputs: dict) -> dict:
            save_arrays(folder / FEEDS_FILE, feeds)
            save_by_position(folder / OUTPUTS_FILE, outputs)     # names of any length, in their order
            return {}
    else:
        spec = config.inputs
        config.inputs = FeedSpec(mode="files", files={"*": str(folder / FEEDS_FILE)}, seed=spec.seed,
                                 vocab_size=spec.vocab_size)

        def on_first_outputs(feeds: dict, outputs: dict) -> dict:
            reference = load_by_position(folder / OUTPUTS_FILE)
            return {"fidelity": output_fidelity(reference, outputs, params.tolerance, params.output_tolerance)}

    prepared = prepare(params.path, config, ctx, on_first_outputs=on_first_outputs)
    if params.is_reference:          # before READY, as the feeds: the next member reads it
        (folder / PLAN_FILE).write_text(json.dumps(prepared.feed_info["inputs"]))
    else:
        prepared.feed_info["inputs"] = shared_inputs(json.loads((folder / PLAN_FILE).read_text()),
                                                     prepared.feed_info["inputs"])
    accuracy = None
    if data_spec is not None:         # before READY: the next member reads what the reference writes here
        from app.core.bench.accuracy import score_samples
        accuracy = score_samples(params.path, prepared.session, data_spec, folder, params.is_reference, ctx)
    measurement = serve_blocks(prepared, config, params.run, ctx)
    report = bench_report(prepared, config, params.run, measurement)
    report["variant"] = params.variant
    report["accuracy"] = accuracy
    return report


def member_events(ctx: JobContext, labels: list[str], planned: dict | None = None) -> Callable[[int, str, dict], None]:
    """A member's log lines and progress as the orchestrating job's, labelled. The first
    member's inputs are the run's (the reference's, a sweep's first cell's): they are sent on
    as the job's own "inputs" data, so a window can title the run while it goes, and kept
    in `planned`."""
    def on_event(index: int, kind: str, payload: dict) -> None:
        if kind == "log":
            ctx.log(f"{labels[index]}: {payload['message']}", payload.get("level", "info"))
        elif kind == "progress":
            ctx.progress(None, f"{labels[index]}: {payload.get('message', '')}")
        elif kind == "data" and payload["kind"] == "inputs" and index == 0:
            if planned is not None:
                planned.update(payload["payload"])
            ctx.data("inputs", payload["payload"])
    return on_event


def compare_job(params: CompareParams, ctx: JobContext) -> dict:
    """Runs in the calling process (it only starts children): each model in a child of its
    own, all kept alive and timed in alternation, one block at a time, so no two run at
    once and a slow spell of the machine falls on all of them (see app.core.measure.alternate);
    in `pairs` sets of fresh processes, and more while an interval cannot answer yet, as
    long as another fits in max_seconds (app.core.measure.pairs)."""
    models, config, settings = params.models, params.session, params.run
    labels = [model.get("label") or Path(model["path"]).name for model in models]
    planned: dict = {}

    def keep_partial(measured) -> None:
        """Stopped: the rounds measured so far, as a result marked partial (it is not stored)."""
        rows = [partial_row(label, model["path"], measured.figures(index), row)
                for index, (model, label, row) in enumerate(zip(models, labels, summarize(measured)))]
        ctx.data("compare-partial", {"baseline": labels[0], "models": rows, "inputs": planned.get("inputs", []),
                                     "speedup_definition": SPEEDUP_DEFINITION, "alternation": measured.describe(),
                                     "partial": True, "created": time.time()})

    with tempfile.TemporaryDirectory(prefix="ortune-compare-") as folder:
        reference = file_precision(models[0]["path"])       # read once, not once per model beside it
        members = [MemberParams(path=model["path"], session=config.checked(), run=settings, variant=label,
                                reference_dir=folder, is_reference=index == 0,
                                tolerance=GivenTolerance.from_dict(
                                    for_precisions(reference, file_precision(model["path"]))[0].tolerance()
                                    if index else {}))
                   for index, (model, label) in enumerate(zip(models, labels))]
        pairs = Pairs(params.pairs, params.max_seconds,
                      lambda result: all(row["conclusive"] for row in summarize(result)[1:]))
        alternation = alternate(MEMBER, members, per_pair(settings, params.pairs), ctx,
                                member_events(ctx, labels, planned), keep_partial, pairs=pairs)
    reports = alternation.reports
    baseline = reports[0]
    result = {
        "baseline": baseline["variant"],
        "models": [compare_row(report, row) for report, row in zip(reports, summarize(alternation))],
        "inputs": baseline["inputs"],
        "speedup_definition": SPEEDUP_DEFINITION,
        "alternation": alternation.describe(pairs=pairs),
        "session": config.to_dict(),
        "run": settings.to_dict(),
        "ort_version": baseline["ort_version"],
        "machine": baseline["machine"],
        "model": {"path": str(Path(baseline["model"]["path"]).resolve())},
        "created": time.time(),
    }
    generation = both_phases([(model["path"], config, label) for model, label in zip(models, labels)],
                             result["models"], result["inputs"], settings, params.pairs, params.max_seconds, ctx)
    if generation is not None:
        result["generation"] = generation
    return result


def time_phase(members: list[tuple[str, SessionConfig, str]], phase: str, settings, pairs: int, max_seconds: float,
               ctx) -> tuple[list[dict], list[dict]]:
    """`members` ((path, session, label), the reference first) timed in alternation on the
    decoder step `phase`, in `pairs` pairs of fresh processes and more while an interval
    cannot answer, within max_seconds: (their comparison rows, the reference's inputs)."""
    labels = [label for _, _, label in members]
    ctx.progress(None, f"timing the {phase} phase in alternation")
    with tempfile.TemporaryDirectory(prefix=f"ortune-{phase}-") as folder:
        params = [MemberParams(path=path, session=in_phase(config, phase).checked(), run=settings, variant=label,
                               reference_dir=folder, is_reference=index == 0, record=False)
                  for index, (path, config, label) in enumerate(members)]
        rule = Pairs(pairs, max_seconds, lambda result: all(row["conclusive"] for row in summarize(result)[1:]))
        measured = alternate(MEMBER, params, per_pair(settings, pairs), ctx, member_events(ctx, labels), pairs=rule)
    rows = [compare_row(report, row) for report, row in zip(measured.reports, summarize(measured))]
    return rows, measured.reports[0]["inputs"]


def both_phases(members: list[tuple[str, SessionConfig, str]], timed: list[dict], timed_inputs: list[dict],
                settings, pairs: int, max_seconds: float, ctx) -> dict | None:
    """The generation report of a comparison whose reference is a decoder: the phase it timed
    (`timed`, its rows) and the other one, timed here; None for a model without a cache."""
    phases = generation_phases(members[0][0], members[0][1])
    if phases is None:
        return None
    first, other = phases
    rows, inputs = time_phase(members, other, settings, pairs, max_seconds, ctx)
    return generation_report({first: timed, other: rows}, {first: timed_inputs, other: inputs})


def cell_job(params: BenchParams, ctx: JobContext) -> dict:
    """One cell of a sweep, in its own process, kept alive: it makes its session and feeds
    (its own shapes), then times the blocks the sweep asks for (alternate.serve_blocks)."""
    prepared = prepare(params.path, params.session, ctx, require_dims=tuple(params.require_dims))
    measurement = serve_blocks(prepared, params.session, params.run, ctx)
    return bench_report(prepared, params.session, params.run, measurement)


def _cell_params(params: SweepParams, value: int | None, concurrency: int) -> BenchParams:
    config = params.session.checked()
    if params.dim:
        config.inputs.dims[params.dim] = value
        if params.dim in config.free_dimension_overrides:
            config.free_dimension_overrides[params.dim] = value
    run = RunSettings.from_dict({**params.run.to_dict(), "concurrency": concurrency})
    return BenchParams(path=params.path, session=config, run=run, record=False,
                       require_dims=[params.dim] if params.dim else [])


def sweep_job(params: SweepParams, ctx: JobContext) -> dict:
    """Runs in the calling process (it only starts children): every cell in a child of its
    own, timed in alternation against the first cell, in groups (see app.core.bench.sweep)."""
    dim = params.dim or None
    dim_values = list(params.dim_values) if dim else [None]
    concurrency_values = list(params.concurrency_values)
    percentile, limit = params.limit_percentile, params.latency_limit_ms
    grid = [(value, k) for value in dim_values for k in concurrency_values]
    steps = decoder_steps(params.path, dim, [value for value, _ in grid], params.session.inputs)
    names = [(f"{dim}={value}, " if dim else "") + f"concurrency {k}" for value, k in grid]

    def ratio(index: int, part) -> dict:
        return cell_ratio(part) | (REFERENCE_RATIO if index == 0 else {})

    def finished(index: int, part) -> dict:
        return sweep_cell(*grid[index], report_figures(part.report, part.group), ratio(index, part),
                          steps[index] if steps else None)

    def send_group(measured, group: list[int]) -> None:
        """A group's cells as soon as it is done (the first cell's, with the last group)."""
        for index in group:
            ctx.data("sweep-cell", finished(index, measured.cells[index]))

    def send_partial(indices: list[int], rounds, parts) -> None:
        """Stopped: the group being measured, from its whole rounds, marked partial."""
        for position, index in enumerate(indices):
            figures = rounds.figures(position) | {"group": parts[position].group}
            ctx.data("sweep-cell", sweep_cell(*grid[index], figures, ratio(index, parts[position]),
                                              steps[index] if steps else None) | {"partial": True})

    items = [batch * new for batch, new in steps] if steps else [value or 1 for value, _ in grid]
    measured = measure_grid(CELL, [_cell_params(params, value, k) for value, k in grid], items,
                            [k for _, k in grid], params.run, ctx, member_events(ctx, names), params.max_processes,
                            send_group, send_partial)
    cells = [finished(index, part) for index, part in enumerate(measured.cells)]
    ctx.data("sweep-cell", cells[0])
    best = best_cell(cells, limit, percentile)
    second = runner_up(cells, best, limit, percentile) if best else None
    margin = None
    if second is not None:
        margin = pair_ratio(measured, cells.index(best), cells.index(second)) | {
            "runner_up": {"dim_value": second["dim_value"], "concurrency": second["concurrency"]}}
        margin["measurable"] = margin["verdict"] == "faster"
    first = measured.cells[0].report
    result = {
        "dim": dim, "dim_values": dim_values if dim else [], "concurrency_values": concurrency_values,
        "cells": cells, "unit": items_unit(dim, cells), "latency_limit_ms": limit, "limit_percentile": percentile,
        "best": best,
        "best_vs_runner_up": margin, "ratio_definition": RATIO_DEFINITION,
        "alternation": {"groups": [[0, *group] for group in measured.groups], "plans": measured.plans,
                        "max_processes": params.max_processes, "confidence": 0.95,
                        "verdict_rule": RULE},
        "inputs": first["inputs"], "session": params.session.to_dict(), "run": params.run.to_dict(),
        "providers": first["providers"], "ort_version": first["ort_version"], "machine": first["machine"],
        "model": {"path": str(Path(params.path).resolve())}, "created": time.time(),
    }
    return result


# how history files each (app.core.store.recording): a run that asked not to be kept is not
def _bench_facts(params: BenchParams, result: dict) -> dict | None:
    return {"model": result["model"]["path"]} if params.record else None


def _compare_facts(params: CompareParams, result: dict) -> dict | None:
    rows = result["models"]
    return {"model": rows[0]["path"], "variant": " vs ".join(row["label"] for row in rows),
            "providers": rows[0]["providers"]} if params.record else None


def _sweep_facts(params: SweepParams, result: dict) -> dict | None:
    if not params.record:
        return None
    best = result["best"] or {}
    latency = best.get("latency_ms") or {}
    return {"model": params.path, "variant": "sweep " + (f"{result['dim']} × " if result["dim"] else "") + "concurrency",
            "p50_ms": latency.get("p50"), "p99_ms": latency.get("p99"), "throughput_per_s": best.get("throughput_per_s")}


def _spread_compare(job: Job, params: CompareParams, address: str, tasks: int | None = None,
                    ctx=None) -> dict:
    from app.core.bench.spread import spread_compare
    return spread_compare(job, params, address, tasks, ctx)


def _spread_sweep(job: Job, params: SweepParams, address: str, tasks: int | None = None,
                  ctx=None) -> dict:
    from app.core.bench.spread import spread_sweep
    return spread_sweep(job, params, address, tasks, ctx)


def _check_sweep(params: SweepParams, place: str) -> None:
    """The swept dimension is the model's, read here: refused before a target or a cluster is contacted."""
    from app.core.bench.sweep import check_swept_dim
    check_swept_dim(params.path, params.dim)


BENCH = Job("bench", bench_job, BenchParams, result=BenchResult, runs=ON_TARGET, records=Records("bench", _bench_facts),
            measures=True, text=("variant",))
MEMBER = Job("compare-member", member_job, MemberParams, result=BenchResult, runs=LOCAL_ONLY)
COMPARE = Job("compare", compare_job, CompareParams, child=False, result=CompareResult,
              runs=ANYWHERE, records=Records("compare", _compare_facts), measures=True,
              spread=_spread_compare, text=("label",))   # it only starts children
CELL = Job("sweep-cell", cell_job, BenchParams, result=BenchResult, runs=LOCAL_ONLY)
SWEEP = Job("sweep", sweep_job, SweepParams, child=False, result=SweepResult,
            runs=ANYWHERE, records=Records("sweep", _sweep_facts), measures=True,
            spread=_spread_sweep, before=_check_sweep)   # it only starts children
