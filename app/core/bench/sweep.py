"""Sweep: one model over a grid of a symbolic dimension's values (batch 1, 2, 4 …)
and concurrency levels, each cell measured in a fresh process.

The answer a user wants is usually "the most throughput whose latency I can still
accept": with a latency limit, the best cell under it is named. Throughput counts items:
runs per second times the swept dimension's value (images a second for a batch sweep,
tokens a second for a sequence sweep); without a dimension, items are runs."""

from __future__ import annotations

import time
from pathlib import Path

from app.core.bench.bench import RunSettings, run_child
from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext

LIMIT_PERCENTILES = ("p50", "p90", "p95", "p99")


def best_cell(cells: list[dict], limit_ms: float | None, percentile: str = "p99") -> dict | None:
    """The cell with the most items per second whose latency percentile is within the limit."""
    allowed = [c for c in cells if limit_ms is None or c["latency_ms"][percentile] <= limit_ms]
    return max(allowed, key=lambda c: c["items_per_s"], default=None)


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


def sweep_job(params: dict, ctx: JobContext) -> dict:
    """params: path, session, run, dim (name or None), dim_values, concurrency_values,
    latency_limit_ms, limit_percentile, record.

    Runs in the calling process; every cell is a fresh child running bench_job."""
    from app.core.store.history import History
    from app.core.session.config import SessionConfig

    dim = params.get("dim") or None
    dim_values = list(params.get("dim_values") or []) if dim else [None]
    concurrency_values = list(params.get("concurrency_values") or [1])
    percentile = params.get("limit_percentile", "p99")
    if percentile not in LIMIT_PERCENTILES:
        raise UserError("bad-option", f"the latency limit applies to one of {', '.join(LIMIT_PERCENTILES)}, "
                                      f"not {percentile!r}")
    if dim and not dim_values:
        raise UserError("bad-option", f"give the values of {dim} to sweep")
    limit = params.get("latency_limit_ms")
    config = SessionConfig.from_dict(params.get("session") or {})
    settings = RunSettings.from_dict(params.get("run"))
    grid = [(value, k) for value in dim_values for k in concurrency_values]
    cells, last = [], None
    for index, (value, concurrency) in enumerate(grid):
        ctx.check_cancel()
        cell_config = SessionConfig.from_dict(config.to_dict())
        if dim:
            cell_config.inputs.dims[dim] = value
            if dim in cell_config.free_dimension_overrides:
                cell_config.free_dimension_overrides[dim] = value
        cell_run = RunSettings(**{**settings.to_dict(), "concurrency": concurrency})
        name = (f"{dim}={value}, " if dim else "") + f"concurrency {concurrency}"

        def forward(kind: str, payload: dict, index=index, name=name) -> None:
            if kind == "progress":
                ctx.progress((index + (payload.get("fraction") or 0.0)) / len(grid), f"{name}: {payload['message']}")
            elif kind == "log":
                ctx.log(f"{name}: {payload['message']}", payload.get("level", "info"))

        last = run_child("app.core.bench.bench:bench_job",
                         {"path": params["path"], "session": cell_config.to_dict(), "run": cell_run.to_dict(),
                          "record": False, "require_dims": [dim] if dim else []}, ctx, forward)
        cell = {"dim_value": value, "concurrency": concurrency, "latency_ms": last["latency_ms"],
                "throughput_per_s": last["throughput_per_s"],
                "items_per_s": last["throughput_per_s"] * (value if dim else 1), "iterations": last["iterations"],
                "peak_rss_bytes": last["peak_rss_bytes"], "gpu_memory_bytes": last["gpu_memory_bytes"],
                "input_shapes": last["inputs"]["shapes"]}
        cells.append(cell)
        ctx.data("sweep-cell", cell)
    best = best_cell(cells, limit, percentile)
    result = {
        "dim": dim, "dim_values": dim_values if dim else [], "concurrency_values": concurrency_values,
        "cells": cells, "latency_limit_ms": limit, "limit_percentile": percentile, "best": best,
        "session": config.to_dict(), "run": settings.to_dict(), "providers": last["providers"],
        "ort_version": last["ort_version"], "machine": last["machine"], "created": time.time(),
    }
    if params.get("record", True):
        history = History()
        result["model"] = history.model_identity(params["path"])
        result["variant"] = "sweep " + ((f"{dim} × " if dim else "") + "concurrency")
        result["summary"] = best or {}
        result["history_id"] = history.record("sweep", result)
    else:
        result["model"] = {"path": str(Path(params["path"]).resolve())}
    return result
