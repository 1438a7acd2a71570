"""Tabs reach the window and each other only through their PanelContext."""

import ast
from pathlib import Path

import pytest

from app.core.session.config import SessionConfig
from app.gui.shell.model_list import OpenModel

PANELS = Path(__file__).resolve().parents[2] / "app" / "gui" / "panels"


def cell(batch, k, p99, throughput, ratio):
    return {"dim_value": batch, "concurrency": k, "throughput_per_s": throughput / batch, "items_per_s": throughput,
            "latency_ms": {"p50": p99 / 2, "p90": p99 * 0.8, "p99": p99}, "ratio": ratio,
            "ratio_ci": [ratio * 0.9, ratio * 1.1], "verdict": "faster"}


def sweep_entry():
    cells = [cell(1, 1, 1.0, 100.0, 1.0) | {"verdict": "reference"}, cell(4, 1, 2.0, 300.0, 3.0)]
    report = {"dim": "batch", "dim_values": [1, 4], "concurrency_values": [1], "cells": cells, "best": cells[1],
              "latency_limit_ms": 5.0, "limit_percentile": "p99", "alternation": {"groups": [[0, 1]]}}
    return {"id": 7, "kind": "sweep", "created": 0.0, "model_path": "/m.onnx", "model_sha256": "0" * 64,
            "ort_version": "1", "machine": {}, "variant": "", "report": report, "run": {"iterations": 10},
            "session": SessionConfig(intra_op_num_threads=2).to_dict()}


def test_no_tab_reaches_into_the_window_or_finds_another_tab():
    for path in PANELS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            where = f"{path.relative_to(PANELS)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute):
                assert node.attr not in ("window", "findChild", "findChildren", "model_list", "statusBar"), \
                    f"{where} uses .{node.attr}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert node.func.attr not in ("panel", "window"), f"{where} calls .{node.func.attr}()"


def test_history_opens_a_sweep_in_the_benchmark_tab(qtbot, window):
    history = window.panel("History")
    history.ensure_built()
    history.open_entry(sweep_entry())
    bench = window.panel("Benchmark")
    assert window.tabs.currentWidget() is bench and bench.tabs.currentWidget() is bench.sweep
    assert bench.sweep.table.headers[0] == "batch" and len(bench.sweep.table.rows) == 2


def test_history_runs_a_sweep_again_in_its_tab(window, monkeypatch):
    history = window.panel("History")
    history.ensure_built()
    bench = window.panel("Benchmark")
    bench.ensure_built()
    started = []
    monkeypatch.setattr(bench.sweep, "start", lambda *args: started.append(args))
    monkeypatch.setattr(history, "_selected_entry", sweep_entry)
    history.rerun_selected()
    (params,) = started[0]
    assert params.path == "/m.onnx" and params.session.intra_op_num_threads == 2 and params.run.iterations == 10
    assert params.dim_values == [1, 4] and window.tabs.currentWidget() is bench


def test_using_stored_settings_sets_the_session_and_its_widgets(qtbot, window, monkeypatch):
    session = window.panel("Session")
    session.ensure_built()
    history = window.panel("History")
    history.ensure_built()
    monkeypatch.setattr(history, "_selected_entry", sweep_entry)
    history.use_settings()
    assert window.session.config().intra_op_num_threads == 2
    assert session.widgets["intra_op_num_threads"].value() == 2
    qtbot.waitUntil(lambda: not any(j.state == "running" for j in window.jobs.jobs), timeout=30000)


def test_a_tab_follows_the_model_list_through_its_context(window, tmp_path):
    first, second = OpenModel(str(tmp_path / "a.onnx")), OpenModel(str(tmp_path / "b.onnx"))
    panel = window.panel("Diagnose")
    for model in (first, second):
        window.model_list.add(model)
    window.model_list.select(second)
    assert panel.model is second and window.context.current_model() is second
    window.model_list.item_for(first).setSelected(True)
    assert window.context.selected_models() == [first, second]


def test_a_job_whose_results_no_tab_shows_has_no_tab(window):
    from app.core.model.jobs import INSPECT
    with pytest.raises(KeyError):
        window.context.show_result(INSPECT, {})
