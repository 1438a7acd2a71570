"""The window keeps a benchmark whose history cannot be used, and the History tab stays
usable when the store is damaged or unreadable."""

from tests import models
from tests.gui.test_benchmark_panels import add_model, wait_for_job


def test_a_benchmark_is_shown_when_the_history_cannot_be_used(qtbot, window, tmp_path, monkeypatch):
    (tmp_path / "data").write_text("a file where the data folder should be")
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    add_model(window, models.save(models.tiny_add(), tmp_path / "tiny.onnx"))
    panel = window.panel("Benchmark")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    panel.run_form.iterations.setValue(200)
    panel.start()
    job = panel.job
    wait_for_job(qtbot, job)
    assert job.state == "done", job.error
    assert panel.report["latency_ms"]["p50"] > 0 and panel.report["history_id"] is None
    assert "this result is not stored" in panel.control.status.text()
    history = window.panel("History")
    window.tabs.setCurrentWidget(history)
    history.ensure_built()
    assert history.table.rows == [] and "cannot be used" in history.detail_title.text()


def test_the_history_tab_moves_a_damaged_store_aside(qtbot, window, tmp_path, monkeypatch):
    (tmp_path / "history.sqlite").write_bytes(b"garbage" * 1000)
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path))
    history = window.panel("History")
    window.tabs.setCurrentWidget(history)
    history.ensure_built()
    assert history.table.rows == [] and "was damaged" in history.detail_title.text()
    assert [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
