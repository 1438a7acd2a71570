"""Sweep grid: cells in alternation against the first, groups, ratios, the best cell."""

import numpy as np
import pytest

from app.core.measure.runs import RunSettings
from app.core.bench.jobs import SWEEP
from app.core.bench.sweep import Grid, GridCell, best_cell, measure_grid, pair_ratio, parse_values
from app.core.jobs.errors import JobCancelled, UserError
from app.core.jobs.protocol import JobContext
from tests import models
from tests.sample_jobs import PACED_MEMBER, SampleParams


def cell(p99, throughput):
    return {"latency_ms": {"p50": p99 / 2, "p99": p99}, "items_per_s": throughput, "ratio": throughput / 100}


def test_best_cell_respects_the_limit():
    cells = [cell(1.0, 100), cell(3.0, 500), cell(2.0, 300)]
    assert best_cell(cells, None) is cells[1]
    assert best_cell(cells, 2.5) is cells[2]
    assert best_cell(cells, 2.5, "p50") is cells[1]
    assert best_cell(cells, 0.5) is None


def test_the_best_cell_is_ranked_by_its_alternating_ratio():
    steady, lucky = cell(1.0, 100), cell(1.0, 120)
    steady["ratio"], lucky["ratio"] = 1.3, 1.1        # lucky's blocks were few and fast, its median is not
    assert best_cell([steady, lucky], None) is steady


@pytest.mark.parametrize("text", ["", "1,x", "0,2", "-1"])
def test_bad_values_are_refused(text):
    with pytest.raises(UserError):
        parse_values(text, "batch")


def test_values_keep_their_order_without_repeats():
    assert parse_values(" 8, 1,2,2 ", "batch") == [8, 1, 2]


def test_groups_share_the_reference_and_never_exceed_the_processes_allowed():
    # cells: (ms per run, items per run, threads); the reference does 1 item in 2 ms
    shape = [(2.0, 1, 1), (1.0, 1, 1), (4.0, 8, 1), (2.0, 1, 2)]
    members = [SampleParams(value=ms) for ms, _, _ in shape]
    grid = measure_grid(PACED_MEMBER, members, [n for _, n, _ in shape], [k for _, _, k in shape],
                        RunSettings(iterations=50), JobContext(), max_processes=2)
    assert grid.groups == [[1], [2], [3]]
    reports = [c.report for c in grid.cells]
    alive = [report["alive"] for report in reports]
    for one, two in zip(alive[1:], alive[2:]):       # a group's cell is gone before the next one starts
        assert one[1] < two[0]
    assert len(reports[0]["runs"]) == sum(len(r["runs"]) for r in reports[1:])   # the reference ran in every group
    assert reports[1]["runs"][0] == 2 * reports[0]["runs"][0]    # blocks last as long as the slowest member's
    assert reports[3]["runs"][0] == 2 * reports[0]["runs"][0]    # two threads: twice the runs
    ratios = [np.median(c.ratios()) for c in grid.cells]
    # paced throughput: items × 1000 / ms per run; the paced member's wall does not shrink with threads
    assert ratios == pytest.approx([1.0, 2.0, 4.0, 1.0])
    assert [c.group for c in grid.cells[1:]] == [0, 1, 2]


def test_a_small_grid_runs_as_one_group():
    members = [SampleParams(value=1.0) for _ in range(3)]
    grid = measure_grid(PACED_MEMBER, members, [1, 1, 1], [1, 1, 1], RunSettings(iterations=50), JobContext())
    assert grid.groups == [[1, 2]]


def _grid(ratios_by_cell, groups, throughputs=None):
    cells = [GridCell(group=group, throughput=list(t), reference_throughput=list(np.asarray(t) / r))
             for r, group, t in zip(ratios_by_cell, groups, throughputs)]
    return Grid(cells, [], [])


def test_pairs_in_one_group_use_their_shared_rounds():
    rng = np.random.default_rng(1)
    machine = 1 + rng.uniform(0, 1, 20)      # spells that slow every member of a round alike
    grid = _grid([np.ones(20), np.full(20, 1.5), np.full(20, 1.2)], [0, 0, 0],
                 [100 * machine, 150 * machine, 120 * machine])
    together = pair_ratio(grid, 1, 2)
    assert together["ratio"] == pytest.approx(1.25) and together["ci"] == pytest.approx([1.25, 1.25])
    assert together["verdict"] == "faster" and together["how"] == "measured together"
    assert pair_ratio(grid, 0, 1)["ratio"] == pytest.approx(1 / 1.5)


def test_pairs_in_two_groups_chain_through_the_reference():
    rng = np.random.default_rng(2)
    ratios = [np.ones(30), 1.10 + rng.normal(0, 0.05, 30), 1.08 + rng.normal(0, 0.05, 30)]
    grid = _grid(ratios, [0, 0, 1], [np.full(30, 100.0)] * 3)
    chained = pair_ratio(grid, 1, 2)
    assert chained["how"] == "chained through the first cell"
    assert chained["ratio"] == pytest.approx(np.median(ratios[1]) / np.median(ratios[2]))
    low, high = chained["ci"]
    assert low < 1.0 < high and chained["verdict"] == "no-difference"


def test_sweep_over_batch_and_concurrency(tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    sent = []
    ctx = JobContext(lambda kind, payload: sent.append(payload) if kind == "data" else None)
    result = SWEEP({"path": str(path), "dim": "batch", "dim_values": [1, 3], "concurrency_values": [1, 2],
                    "run": {"warmup": 1, "iterations": 50}, "latency_limit_ms": 1e6, "record": False}, ctx)
    assert [(c["dim_value"], c["concurrency"]) for c in result["cells"]] == [(1, 1), (1, 2), (3, 1), (3, 2)]
    assert [c["input_shapes"]["x"] for c in result["cells"]] == [[1, 64], [1, 64], [3, 64], [3, 64]]
    assert [c["inputs"][0]["shape"] for c in result["cells"]] == [[1, 64], [1, 64], [3, 64], [3, 64]]
    assert result["inputs"] == result["cells"][0]["inputs"]
    assert [c["items_per_s"] for c in result["cells"]] == [c["throughput_per_s"] * c["dim_value"]
                                                           for c in result["cells"]]
    assert all(c["iterations"] % c["concurrency"] == 0 for c in result["cells"])
    first = result["cells"][0]
    assert (first["ratio"], first["ratio_ci"], first["verdict"]) == (1.0, [1.0, 1.0], "reference")
    for c in result["cells"][1:]:
        low, high = c["ratio_ci"]
        assert low <= c["ratio"] <= high and c["verdict"] in ("faster", "slower", "no-difference", "could-not-tell")
    assert result["alternation"]["groups"] == [[0, 1, 2, 3]]
    assert "items per second" in result["ratio_definition"]
    assert result["best"] == max(result["cells"], key=lambda c: c["ratio"])
    margin = result["best_vs_runner_up"]
    assert margin["measurable"] == (margin["verdict"] == "faster") and margin["runner_up"]["dim_value"] in (1, 3)
    cells = [event["payload"] for event in sent if event["kind"] == "sweep-cell"]
    assert cells == result["cells"][1:] + result["cells"][:1], "each group's cells when it is done, the first's last"
    planned = [event["payload"] for event in sent if event["kind"] == "inputs"]
    assert [row["shape"] for row in planned[0]["inputs"]] == [[1, 64]], "the first cell's inputs, as it planned them"


def test_a_cancelled_sweep_sends_what_its_group_measured_as_partial(tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    sent, ctx = [], None

    def emit(kind, payload):
        if kind == "data":
            sent.append(payload)
        if kind == "progress" and payload["message"].startswith("round 3"):
            ctx.cancel()

    ctx = JobContext(emit)
    with pytest.raises(JobCancelled):
        SWEEP({"path": str(path), "dim": "batch", "dim_values": [1, 4], "run": {"duration_s": 60},
               "record": False}, ctx)
    cells = [event["payload"] for event in sent if event["kind"] == "sweep-cell"]
    assert [(c["dim_value"], c["partial"]) for c in cells] == [(1, True), (4, True)]
    first, other = cells
    assert first["verdict"] == "reference" and first["rounds"] >= 3
    assert other["iterations"] > 0 and other["latency_ms"]["p50"] > 0
    assert other["items_per_s"] == pytest.approx(4 * other["throughput_per_s"])
    low, high = other["ratio_ci"]
    assert low <= other["ratio"] <= high


def test_sweep_of_a_missing_dimension_is_refused(tmp_path):
    path = models.save(models.mlp(), tmp_path / "mlp.onnx")
    with pytest.raises(UserError, match="no symbolic dimension named seq"):
        SWEEP({"path": str(path), "dim": "seq", "dim_values": [1], "run": {"warmup": 0, "iterations": 1},
               "record": False}, JobContext())
