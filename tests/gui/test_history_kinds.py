"""A job the window starts keeps its result once, and the History tab lists every kind and
opens each: its summary, its raw JSON (a benchmark's chart; comparisons and sweeps in their
own tabs, as before)."""

import json

import pytest

from app.core.bench.jobs import BENCH
from app.core.convert.jobs import CONVERT
from app.core.drift.jobs import DRIFT
from app.core.optimize.jobs import OPTIMIZE
from app.core.profile.jobs import PROFILE
from app.core.store.history import History
from app.core.tune.jobs import TUNE
from tests import models


@pytest.fixture(autouse=True)
def own_history(tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))


def _run(qtbot, window, entry, params):
    job = window.jobs.start(entry.name, entry, entry.make_params(params))
    qtbot.waitUntil(lambda: job.state not in ("running", "cancelling"), timeout=180000)
    qtbot.waitUntil(lambda: not job.thread.isRunning(), timeout=60000)
    assert job.state == "done", job.error
    return job.result


def _history(window):
    panel = window.panel("History")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    panel.refresh()
    return panel


def test_a_benchmark_from_the_window_is_kept_once(qtbot, window, tmp_path):
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    report = _run(qtbot, window, BENCH, {"path": str(path), "run": {"warmup": 1, "iterations": 50}})
    assert [(e["id"], e["kind"]) for e in History().entries()] == [(report["history_id"], "bench")]
    assert "history_samples" not in report


def test_every_kind_is_kept_and_opens_in_the_history_tab(qtbot, window, tmp_path):
    source, variant = models.save(models.mlp(), tmp_path / "mlp.onnx"), str(tmp_path / "mlp16.onnx")
    runs = [(CONVERT, {"kind": "fp16", "input": str(source), "output": variant, "speed_s": 0}),
            (DRIFT, {"source": str(source), "variant": variant}),
            (PROFILE, {"model": str(source), "runs": 5}),
            (TUNE, {"path": str(source), "budget_trials": 2, "block_runs": 1, "finalists": 1, "confirm_seconds": 0.05}),
            (OPTIMIZE, {"model": str(source), "out_dir": str(tmp_path / "shipped"), "kinds": ["fp16"],
                        "screen_seconds": 0.05, "tune": False})]
    kept = {entry.records.kind: _run(qtbot, window, entry, params)["history_id"] for entry, params in runs}
    assert all(kept.values()), kept
    panel = _history(window)
    listed = {row[2]: row[0] for row in panel.table.rows}
    assert listed == kept, "each run listed once, under its kind"
    for index, row in enumerate(panel.table.rows):
        panel.table.selectRow(index)
        panel.open_selected()
        assert panel.entry["kind"] == row[2] and panel.details.currentWidget() is panel.summary
        assert len(panel.summary.toPlainText()) > 40, row[2]
        assert json.loads(panel.raw_text.toPlainText())
    panel.kind_filter.setCurrentText("drift")
    assert [row[2] for row in panel.table.rows] == ["drift"]
