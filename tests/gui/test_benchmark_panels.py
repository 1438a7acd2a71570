"""Session, Benchmark, Compare and History tabs driven as a user would."""

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from app.core.session.inputs import FeedSpec
from app.core.session.config import ProviderSpec, SessionConfig
from app.core.formatting import duration_text
from app.core.verdict import verdict_words
from app.gui.shell.model_list import OpenModel
from tests import models
from tests.gui.steps import tab

PROBE = {"ort_version": "1", "package": "onnxruntime 1", "devices": [], "providers": [
    {"name": "CPUExecutionProvider", "short": "cpu", "available": True, "reason": ""},
    {"name": "CUDAExecutionProvider", "short": "cuda", "available": False, "reason": "no NVIDIA driver"},
    {"name": "DmlExecutionProvider", "short": "dml", "available": False, "reason": "Windows only"}]}


def add_model(window, path, summary=None, select=True):
    """Put a model in the list without reading it in a child (fast)."""
    model = OpenModel(str(path), summary=summary)
    window.model_list.add(model)
    if select:
        window.model_list.select(model)
    return model


def wait_for_job(qtbot, job, timeout=180000):   # a comparison runs several pairs of processes
    qtbot.waitUntil(lambda: job.state not in ("running", "cancelling"), timeout=timeout)
    qtbot.waitUntil(lambda: not job.thread.isRunning(), timeout=timeout)


def session_panel(window):
    panel = tab(window, "Session")
    return panel


def test_session_panel_round_trips_a_preset(qtbot, window, tmp_path):
    panel = session_panel(window)
    config = SessionConfig(providers=[ProviderSpec("CUDAExecutionProvider", {"device_id": "1", "use_tf32": "0"}),
                                      ProviderSpec("CPUExecutionProvider")],
                           graph_optimization_level="basic", execution_mode="parallel", intra_op_num_threads=3,
                           inter_op_num_threads=2, intra_op_allow_spinning=False, inter_op_spin_duration_us=250,
                           dynamic_block_base=4, enable_cpu_mem_arena=False, log_severity_level=1,
                           free_dimension_overrides={"batch": 2}, config_entries={"session.disable_prepacking": "1"},
                           io_binding=True, inputs=FeedSpec(mode="zeros", seed=5, dims={"batch": 2}, vocab_size=77))
    panel.set_config(config)
    assert panel.config().to_dict() == config.to_dict()
    panel.save_preset(str(tmp_path / "preset.json"))
    panel.reset()
    assert panel.config().to_dict() == SessionConfig().to_dict() | {"inputs": panel.config().inputs.to_dict()}
    panel.load_preset(str(tmp_path / "preset.json"))
    assert panel.config().to_dict() == config.to_dict()
    assert window.session.config().to_dict() == config.to_dict()
    panel.copy_python()
    snippet = QGuiApplication.clipboard().text()
    assert "CUDAExecutionProvider" in snippet and "'use_tf32': '0'" in snippet
    assert "options.add_free_dimension_override_by_name('batch', 2)" in snippet
    qtbot.waitUntil(lambda: not any(j.state == "running" for j in window.jobs.jobs), timeout=30000)


def test_unavailable_providers_are_greyed_with_the_reason(qtbot, window):
    panel = session_panel(window)
    window.providers_checked(PROBE)
    items = {panel.providers.list.item(i).data(Qt.ItemDataRole.UserRole): panel.providers.list.item(i)
             for i in range(panel.providers.list.count())}
    cuda = items["CUDAExecutionProvider"]
    assert "unavailable" in cuda.text() and cuda.toolTip() == "no NVIDIA driver"
    assert not cuda.flags() & Qt.ItemFlag.ItemIsUserCheckable
    assert "Windows only" in panel.providers.unavailable.text()
    assert [p.name for p in panel.config().providers] == ["CPUExecutionProvider"]
    panel.widgets["config_entries"].setPlainText("not a pair")
    assert panel.python_snippet() is None and "line 1" in window.last_error[1]
    qtbot.waitUntil(lambda: not any(j.state == "running" for j in window.jobs.jobs), timeout=30000)


def test_benchmark_runs_live_and_lands_in_the_history(qtbot, window, tmp_path):
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    add_model(window, path)
    panel = tab(window, "Benchmark")
    panel.run_form.iterations.setValue(3000)
    panel.run_form.warmup.setValue(4)
    panel.start()
    job = panel.job
    wait_for_job(qtbot, job)
    assert job.state == "done", job.error
    assert panel.view.series.count == 3000
    assert panel.view.series.warmup.size == 5                 # the first run and 4 warm-up runs
    x, y = panel.view.runs_curve.getOriginalDataset()
    assert len(x) > 0 and y.max() == panel.view.series.samples().max()
    edges, counts = panel.view.hist_curve.getOriginalDataset()
    assert counts.sum() == 3000 and len(edges) == len(counts) + 1
    assert panel.values["p50"].text() == duration_text(panel.report["latency_ms"]["p50"], 4, trim=False)
    history = tab(window, "History")
    assert history.table.rows[0][0] == panel.report["history_id"]
    history.table.selectRow(0)
    history.open_selected()
    assert history.chart.series.count == 3000
    assert json.loads(history.raw_text.toPlainText())["iterations"] == 3000
    assert "a thread per core" in history.summary.toPlainText()


def two_models_selected(window, tmp_path):
    """Two MLPs in the list, a.onnx (the current model) and b.onnx, both selected."""
    first = add_model(window, models.save(models.mlp(), tmp_path / "a.onnx"))
    second = add_model(window, models.save(models.mlp(seed=3), tmp_path / "b.onnx"), select=False)
    for model in (first, second):
        window.model_list.item_for(model).setSelected(True)
    return first, second


def test_compare_selected_models(qtbot, window, tmp_path):
    two_models_selected(window, tmp_path)
    panel = tab(window, "Compare")
    panel.run_form.iterations.setValue(30)
    panel.pairs_form.pairs.setValue(3)
    panel.pairs_form.max_seconds.setValue(5)
    started, start = [], panel.jobs.start
    panel.jobs.start = lambda title, job, params, **kw: started.append(params) or start(title, job, params, **kw)
    panel.start()
    assert (started[0].pairs, started[0].max_seconds) == (3, 5), "the window's pairs reach the comparison"
    wait_for_job(qtbot, panel.job if panel.job else window.jobs.jobs[-1])
    assert panel.result is not None, window.last_error
    assert panel.result["alternation"]["pairs_run"] >= 3
    assert [row[0] for row in panel.table.rows] == ["a.onnx", "b.onnx"]
    reference, other = panel.result["models"]
    assert panel.table.rows[0][1:4] == [1.0, "1.00–1.00", "reference"]
    low, high = other["speedup_ci"]
    assert panel.table.rows[1][1:4] == [other["speedup"], f"{low:.2f}–{high:.2f}", verdict_words(other["verdict"])]
    assert panel.speedup_chart.values == [1.0, other["speedup"]]
    whiskers = panel.speedup_whiskers.opts
    assert list(whiskers["bottom"]) == [pytest.approx(other["speedup"] - low)]
    assert list(whiskers["top"]) == [pytest.approx(high - other["speedup"])]
    assert "95 % interval" in panel.speedup_chart.title.text()
    assert "Speedup = reference p50 / model p50, the reference being a.onnx" in panel.caption.text()
    assert "Verdict: faster or slower when the whole 95 % interval" in panel.caption.text()
    assert panel.throughput_chart.labels == ["a.onnx", "b.onnx"]
    assert {r[1] for r in panel.latency_chart.rows} == {"a.onnx", "b.onnx"}
    assert panel.table.export_csv(str(tmp_path / "t.csv"))
    assert (tmp_path / "t.csv").read_text().startswith("Model,Speedup,95 % interval,Verdict")
    pngs = panel.export_charts(str(tmp_path))
    assert all((tmp_path / p).stat().st_size > 0 for p in pngs)


def test_a_comparison_stored_before_alternation_says_it_has_no_interval(window):
    from app.core.store.migrations import migrated
    from tests.old_reports import compare_before_alternation

    panel = window.panel("Compare")
    panel.ensure_built()
    panel.show_result(migrated(compare_before_alternation(), "a comparison"))
    assert panel.table.rows[1][1:4] == [1.5, "not measured", "one after the other"]
    assert panel.speedup_whiskers is None and "no interval, no verdict" in panel.caption.text()


def test_sweep_view_shows_the_grid_and_the_best_cell(window):
    from app.core.store.migrations import migrated

    panel = window.panel("Benchmark")
    panel.ensure_built()

    def cell(batch, k, p99, throughput):
        return {"dim_value": batch, "concurrency": k, "throughput_per_s": throughput / batch, "items_per_s": throughput,
                "latency_ms": {"p50": p99 / 2, "p90": p99 * 0.8, "p99": p99}}

    cells = [cell(1, 1, 1.0, 100.0), cell(1, 2, 1.5, 180.0), cell(4, 1, 2.0, 300.0), cell(4, 2, 9.0, 400.0)]
    for c, ratio, low, high, verdict in zip(cells, [1.0, 1.8, 3.0, 4.0], [1.0, 1.7, 2.9, 3.5],
                                            [1.0, 1.9, 3.1, 4.5], ["reference", "faster", "faster", "faster"]):
        c.update(ratio=ratio, ratio_ci=[low, high], verdict=verdict)
    margin = {"ratio": 1.67, "ci": [1.5, 1.8], "verdict": "faster", "measurable": True,
              "runner_up": {"dim_value": 1, "concurrency": 2}}
    panel.sweep.show_result({"dim": "batch", "cells": cells, "best": cells[2], "latency_limit_ms": 5.0,
                             "limit_percentile": "p99", "best_vs_runner_up": margin})
    assert panel.sweep.table.headers[0] == "batch" and panel.sweep.table.headers[-4:-1] == [
        "vs first", "95 % interval", "verdict"]
    assert [row[-1] for row in panel.sweep.table.rows] == [False, False, True, False]
    assert panel.sweep.table.rows[3][-4:-1] == ["×4.00", "3.50–4.50", "faster"]
    assert panel.sweep.heat.rows[-1] == [4, 2, 400.0]
    assert "300.0 batch items/s at batch=4, concurrency 1" in panel.sweep.control.status.text()
    assert "runner-up: ×1.67 [1.50–1.80], a measurable lead" in panel.sweep.control.status.text()
    panel.sweep.show_result({"dim": "batch", "cells": cells, "best": cells[2], "latency_limit_ms": 5.0,
                             "limit_percentile": "p99", "best_vs_runner_up": margin | {"measurable": False}})
    assert "not a measurable lead" in panel.sweep.control.status.text()
    old = [{k: v for k, v in c.items() if k not in ("ratio", "ratio_ci", "verdict")} for c in cells]
    panel.sweep.show_result(migrated({"dim": "batch", "cells": old, "best": old[2], "latency_limit_ms": 5.0,
                                      "limit_percentile": "p99"}, "a sweep stored before sweeps alternated"))
    assert panel.sweep.table.rows[3][-4:-1] == ["–", "–", "one after the other"]
    assert "runner-up" not in panel.sweep.control.status.text()
    assert {r[1] for r in panel.sweep.latency_chart.rows} == {"p50, concurrency 1", "p99, concurrency 1",
                                                             "p50, concurrency 2", "p99, concurrency 2"}


@pytest.mark.parametrize("nodes, warned", [(1, True), (10, False)])
def test_placement_view(window, nodes, warned):
    from app.core.session.placement import summarize

    panel = session_panel(window)
    node_list = [{"name": f"g{i}", "op_type": "Conv", "provider": "CUDAExecutionProvider"} for i in range(nodes)]
    node_list += [{"name": "s", "op_type": "Shape", "provider": "CPUExecutionProvider"}] * 3
    result = {"method": "assignment", "nodes": node_list,
              **summarize(node_list, ["CUDAExecutionProvider", "CPUExecutionProvider"])}
    panel.placement.show_result(result)
    assert panel.placement.nodes.rows[0] == ["g0", "Conv", "CUDA"]
    assert panel.placement.summary.text().startswith(f"CUDA: {nodes} node")
    assert bool(panel.placement.warnings.text()) is warned


def test_a_one_dimensional_sweep_is_a_line_not_a_one_column_heat_map(window):
    panel = window.panel("Benchmark")
    panel.ensure_built()
    sweep = panel.sweep
    assert sweep.throughput_chart.empty                       # nothing yet: a line of text, not axes
    cells = [{"dim_value": None, "concurrency": k, "throughput_per_s": t, "items_per_s": t, "ratio": t / 61.5,
              "ratio_ci": [t / 65.0, t / 58.0], "verdict": "faster" if k > 1 else "reference",
              "latency_ms": {"p50": 10.0 * k, "p90": 12.0 * k, "p99": 14.0 * k}} for k, t in ((1, 61.5), (2, 87.1))]
    sweep.show_result({"dim": None, "cells": cells, "best": cells[1], "latency_limit_ms": None,
                       "limit_percentile": "p99"})
    assert not sweep.charts.isTabVisible(0) and sweep.charts.currentWidget() is sweep.throughput_chart
    assert [r[:3:2] for r in sweep.throughput_chart.rows] == [[1, 61.5], [2, 87.1]]
    grid = [dict(c, dim_value=b) for b in (1, 4) for c in cells]
    sweep.show_result({"dim": "batch", "cells": grid, "best": grid[0], "latency_limit_ms": None,
                       "limit_percentile": "p99"})
    assert sweep.charts.isTabVisible(0)                        # two dimensions: the heat map is back
