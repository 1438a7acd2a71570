"""Sweep grid: cells, the best cell under a latency limit, bad values."""

import pytest

from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from app.core.bench.jobs import SWEEP
from app.core.bench.sweep import best_cell, parse_values
from tests import models


def cell(p99, throughput):
    return {"latency_ms": {"p50": p99 / 2, "p99": p99}, "items_per_s": throughput}


def test_best_cell_respects_the_limit():
    cells = [cell(1.0, 100), cell(3.0, 500), cell(2.0, 300)]
    assert best_cell(cells, None) is cells[1]
    assert best_cell(cells, 2.5) is cells[2]
    assert best_cell(cells, 2.5, "p50") is cells[1]
    assert best_cell(cells, 0.5) is None


@pytest.mark.parametrize("text", ["", "1,x", "0,2", "-1"])
def test_bad_values_are_refused(text):
    with pytest.raises(UserError):
        parse_values(text, "batch")


def test_values_keep_their_order_without_repeats():
    assert parse_values(" 8, 1,2,2 ", "batch") == [8, 1, 2]


def test_sweep_over_batch(tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    cells = []
    ctx = JobContext(lambda kind, payload: cells.append(payload["payload"]) if kind == "data" else None)
    result = SWEEP({"path": str(path), "dim": "batch", "dim_values": [1, 3], "concurrency_values": [1],
                        "run": {"warmup": 1, "iterations": 50}, "latency_limit_ms": 1e6, "record": False}, ctx)
    assert [(c["dim_value"], c["concurrency"]) for c in result["cells"]] == [(1, 1), (3, 1)]
    assert [c["input_shapes"]["x"] for c in result["cells"]] == [[1, 64], [3, 64]]
    assert [c["items_per_s"] for c in result["cells"]] == [c["throughput_per_s"] * c["dim_value"]
                                                           for c in result["cells"]]
    assert result["best"] == max(result["cells"], key=lambda c: c["items_per_s"])
    assert cells == result["cells"]


def test_sweep_of_a_missing_dimension_is_refused(tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    with pytest.raises(UserError, match="no symbolic dimension named seq"):
        SWEEP({"path": str(path), "dim": "seq", "dim_values": [1], "run": {"warmup": 0, "iterations": 1},
                   "record": False}, JobContext())
