"""A sweep or a comparison spread over a Ray cluster (app.core.targets.cluster).

Ratios are only formed between measurements made on one machine: every task measures its
share of the cells (or models) in alternation with its own copy of the first one, so each
ratio comes from one worker. Spreading is valid when the workers are alike (the same
hardware, ONNX Runtime build and load): then one task's ratios stand beside another's.
Latencies in milliseconds from different workers are only as comparable as the workers;
each cell and model says which worker measured it. These are the entries' `spread`
(app.core.bench.jobs): they are started, and their results kept, as every job is
(app.core.launch.start)."""

from __future__ import annotations

import time

from app.core.bench.sweep import best_cell, runner_up
from app.core.jobs.entry import Job
from app.core.targets.cluster import run_spread

NOTE = ("each task timed its share in alternation with its own copy of the first, on one worker; ratios are "
        "never formed across workers")


def _chunks(items: list, count: int) -> list[list]:
    count = max(1, min(count, len(items)))
    return [items[i::count] for i in range(count)]


def spread_sweep(job: Job, params, address: str, tasks: int | None = None, ctx=None) -> dict:
    """`job`: the sweep's entry; `params`: its SweepParams."""
    from app.core.targets.cluster import connect, workers

    by_dim = bool(params.dim) and len(params.dim_values) > 1
    values = list(params.dim_values if by_dim else params.concurrency_values)
    first, rest = values[0], values[1:]
    parts = []
    for chunk in _chunks(rest, tasks or len(workers(connect(address)))) if rest else [[]]:
        part = params.to_dict() | {"record": False}
        part["dim_values" if by_dim else "concurrency_values"] = [first, *chunk]
        parts.append(part)
    answers, cluster = run_spread(address, job, parts, ctx)
    key = "dim_value" if by_dim else "concurrency"
    cells, shares = [], []
    for index, answer in enumerate(answers):
        mine = [dict(c, measured_on=_where(answer)) for c in answer["result"]["cells"]
                if index == 0 or c[key] != first]
        cells += mine
        shares.append({**_where(answer), "cells": [{"dim_value": c["dim_value"], "concurrency": c["concurrency"]}
                                                   for c in mine]})
    dims = params.dim_values or [None]
    cells.sort(key=lambda c: (dims.index(c["dim_value"]) if c["dim_value"] in dims else 0,
                              params.concurrency_values.index(c["concurrency"])))
    result = dict(answers[0]["result"], cells=cells, dim_values=list(params.dim_values),
                  concurrency_values=list(params.concurrency_values), created=time.time())
    best = best_cell(cells, params.latency_limit_ms, params.limit_percentile)
    second = runner_up(cells, best, params.latency_limit_ms, params.limit_percentile) if best else None
    result["best"], result["best_vs_runner_up"] = best, _margin(answers, best, second)
    result["cluster"] = cluster | {"tasks": shares, "note": NOTE}
    return result


def _margin(answers: list[dict], best: dict | None, second: dict | None) -> dict | None:
    """Best against runner-up, when one task measured both and named the same pair."""
    if best is None or second is None or best["measured_on"] != second["measured_on"]:
        return None
    for answer in answers:
        margin = answer["result"].get("best_vs_runner_up")
        mine = answer["result"].get("best")
        if (_where(answer) == best["measured_on"] and margin and mine
                and (mine["dim_value"], mine["concurrency"]) == (best["dim_value"], best["concurrency"])
                and (margin["runner_up"]["dim_value"], margin["runner_up"]["concurrency"])
                == (second["dim_value"], second["concurrency"])):
            return margin
    return None


def spread_compare(job: Job, params, address: str, tasks: int | None = None, ctx=None) -> dict:
    """`job`: the comparison's entry; `params`: its CompareParams."""
    from app.core.targets.cluster import connect, workers

    reference, rest = params.models[0], list(params.models[1:])
    parts = [params.to_dict() | {"record": False, "models": [reference, *chunk]}
             for chunk in _chunks(rest, tasks or len(workers(connect(address))))]
    answers, cluster = run_spread(address, job, parts, ctx)
    rows, shares = [], []
    for index, answer in enumerate(answers):
        mine = [dict(row, measured_on=_where(answer))
                for row in answer["result"]["models"][(0 if index == 0 else 1):]]
        rows += mine
        shares.append({**_where(answer), "models": [row["label"] for row in mine],
                       "alternation": answer["result"]["alternation"]})
    order = [model.get("label") or model["path"] for model in params.models]
    rows.sort(key=lambda row: next((i for i, m in enumerate(params.models)
                                    if row["path"] == m["path"] and (not m.get("label") or m["label"] == row["label"])),
                                   len(order)))
    result = dict(answers[0]["result"], models=rows, created=time.time())
    result["cluster"] = cluster | {"tasks": shares, "note": NOTE}
    return result


def _where(answer: dict) -> dict:
    return {"node": answer["node"], "host": answer["host"]}
