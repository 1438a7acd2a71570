"""Results as ORTune stored them before results carried a version (version 0), for the tests
of what reads them: the store's migration, `ortune history --show` and the History tab.
`store_unversioned` writes one into the history as that ORTune did: its JSON, no version."""

from __future__ import annotations

import json
import sqlite3

from app.core.store.history import History

MODEL = {"path": "/models/m.onnx", "sha256": "ab" * 32, "size_bytes": 10}
_COMMON = {"model": MODEL, "session": {}, "run": {}, "ort_version": "1.0", "machine": {"cpu": "a CPU"},
           "inputs": [], "created": 1_700_000_000.0}


def _compare_row(label: str, speedup: float) -> dict:
    return {"label": label, "path": f"/models/{label}", "size_bytes": 10, "speedup": speedup,
            "latency_ms": {"p50": 1.0 / speedup, "p90": 1.1, "p99": 1.2}, "throughput_per_s": 900.0 * speedup,
            "fidelity": None, "providers": ["CPUExecutionProvider"]}


def compare_before_alternation() -> dict:
    """A comparison timed one model after the other: no interval, no verdict, no alternation."""
    return {**_COMMON, "baseline": "a.onnx", "models": [_compare_row("a.onnx", 1.0), _compare_row("b.onnx", 1.5)]}


def _cell(batch: int, concurrency: int, throughput: float) -> dict:
    return {"dim_value": batch, "concurrency": concurrency, "latency_ms": {"p50": 1.0, "p90": 1.5, "p99": 2.0},
            "throughput_per_s": throughput, "items_per_s": throughput * batch}


def sweep_before_alternation() -> dict:
    """A sweep whose cells were each timed in a fresh process, one after the other: no ratios."""
    cells = [_cell(1, 1, 1000.0), _cell(2, 1, 700.0)]
    return {**_COMMON, "dim": "batch", "dim_values": [1, 2], "concurrency_values": [1], "cells": cells,
            "best": cells[1], "latency_limit_ms": None, "limit_percentile": "p99", "unit": "batch items/s"}


def conversion_before_the_verdict_rule() -> dict:
    """A conversion whose speed check was judged before the one verdict rule, and before it
    kept `too_busy` and `conclusive`: a narrow interval wholly below ×1, said to be unclear."""
    speed = {"ratio": 0.46, "ratio_ci": [0.41, 0.53], "verdict": "could-not-tell", "source_p50_ms": 60.0,
             "variant_p50_ms": 130.0, "rounds": 30}
    return {**_COMMON, "kind": "fp16", "input": MODEL["path"], "output": "/models/m.fp16.onnx", "input_bytes": 2000,
            "output_bytes": 1000, "size_ratio": 0.5, "seconds": 0.5, "op_changes": {"text": "none"},
            "fidelity": {"skipped": True}, "check": "skipped", "speed": speed}


def candidate_before_its_measured_reason() -> dict:
    """A conversion optimize kept for reuse, chosen by its search, before the row kept its
    measured reason apart from the answer's words."""
    row = {"kind": "fp16", "status": "passed", "verdict": "faster", "speedup": 1.2, "speedup_ci": [1.1, 1.3],
           "reason": "chosen: the fastest candidate that passed its check — faster than the source (×1.20)"}
    return {**conversion_before_the_verdict_rule(), "optimize_candidate": {"key": "k", "row": row}}


def store_unversioned(kind: str, report: dict, history: History | None = None) -> int:
    """Keep `report` in the history as an ORTune before versions stored it; returns its id."""
    history = history or History()
    entry_id = history.record(kind, dict(report))
    with sqlite3.connect(history.path) as db:
        db.execute("UPDATE results SET report_json = ? WHERE id = ?", (json.dumps(report), entry_id))
    db.close()
    return entry_id


def store_raw(kind: str, text: str, history: History | None = None) -> int:
    """Keep a result whose stored text is `text` (a damaged one, or one from a newer ORTune)."""
    history = history or History()
    entry_id = history.record(kind, dict(_COMMON))
    with sqlite3.connect(history.path) as db:
        db.execute("UPDATE results SET report_json = ? WHERE id = ?", (text, entry_id))
    db.close()
    return entry_id
