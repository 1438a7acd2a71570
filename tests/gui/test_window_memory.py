"""What the window keeps between runs: open models, the selection, the session and each tab's
settings; a settings file it cannot read is kept aside with a message; quitting with a running
job asks first."""

import json

from PySide6.QtWidgets import QMessageBox

from app.core.store.settings import load_settings, settings_path
from tests import models
from tests.sample_jobs import COOPERATIVE


def new_window(qtbot):
    from app.gui.shell.main_window import MainWindow

    win = MainWindow(load_settings(set_aside=True), probe_providers=False)
    qtbot.addWidget(win)
    win.show()
    return win


def test_open_models_the_selection_and_tab_settings_come_back(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_CONFIG_DIR", str(tmp_path / "cfg"))
    paths = [models.save(models.mlp(), tmp_path / "a.onnx"), models.save(models.cnn(), tmp_path / "b.onnx"),
             models.save(models.mlp(), tmp_path / "a.fp16.onnx")]
    first = new_window(qtbot)
    opened = []
    for path, parent in ((paths[0], None), (paths[1], None), (paths[2], 0)):
        with qtbot.waitSignal(first.model_opened, timeout=60000) as signal:
            first.open_model(path, parent=opened[parent] if parent is not None else None,
                             kind="source" if parent is None else "fp16")
        opened.append(signal.args[0])
    first.model_list.select(opened[1])
    convert = first.panel("Convert")
    convert.ensure_built()
    convert.select_kind("ort")
    convert.speed.setChecked(False)
    bench = first.panel("Benchmark")
    bench.ensure_built()
    bench.run_form.stop_by.setCurrentIndex(1)
    bench.run_form.duration.setValue(3.5)
    first.session.set(intra_op_num_threads=3)
    first.close()
    first.jobs.shutdown()

    second = new_window(qtbot)
    qtbot.waitUntil(lambda: len(second.model_list.models()) == 3
                    and all(m.summary is not None for m in second.model_list.models()), timeout=60000)
    restored = second.model_list.models()
    assert [m.path for m in restored] == [str(p.resolve()) for p in (paths[0], paths[2], paths[1])]
    variant = next(m for m in restored if m.path == str(paths[2].resolve()))
    assert variant.kind == "fp16" and variant.parent.path == str(paths[0].resolve())
    assert second.current_model().path == str(paths[1].resolve())
    assert second.session.get("intra_op_num_threads") == 3
    convert = second.panel("Convert")
    convert.ensure_built()
    assert convert.kind() == "ort" and not convert.speed.isChecked() and convert.fidelity.isChecked()
    bench = second.panel("Benchmark")
    bench.ensure_built()
    assert bench.run_form.stop_by.currentIndex() == 1 and bench.run_form.duration.value() == 3.5
    assert bench.run_form.duration.isEnabled() and not bench.run_form.iterations.isEnabled()
    second.jobs.shutdown()


def test_every_measuring_tab_keeps_its_settings(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_CONFIG_DIR", str(tmp_path / "cfg"))
    first = new_window(qtbot)
    compare, tune, binding, history, bench = (first.panel(name) for name in
                                              ("Compare", "Tune", "IO Binding", "History", "Benchmark"))
    for panel in (compare, tune, binding, history, bench):
        panel.ensure_built()
    compare.run_form.stop_by.setCurrentIndex(1)
    compare.run_form.duration.setValue(4.5)
    tune.budget_seconds.setValue(300)
    tune.finalists.setValue(3)
    binding.iterations.setValue(777)
    history.kind_filter.setCurrentIndex(history.kind_filter.count() - 1)
    bench.sweep.dim_values.setText("1,16")
    bench.sweep.run_form.concurrency.setValue(2)
    kind = history.kind_filter.currentText()
    first.close()
    first.jobs.shutdown()

    second = new_window(qtbot)
    compare, tune, binding, history, bench = (second.panel(name) for name in
                                              ("Compare", "Tune", "IO Binding", "History", "Benchmark"))
    for panel in (compare, tune, binding, history, bench):
        panel.ensure_built()
    assert compare.run_form.stop_by.currentIndex() == 1 and compare.run_form.duration.value() == 4.5
    assert tune.budget_seconds.value() == 300 and tune.finalists.value() == 3
    assert binding.iterations.value() == 777 and history.kind_filter.currentText() == kind
    assert bench.sweep.dim_values.text() == "1,16" and bench.sweep.run_form.concurrency.value() == 2
    second.jobs.shutdown()


def test_a_model_gone_since_the_last_run_is_skipped(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_CONFIG_DIR", str(tmp_path / "cfg"))
    kept = models.save(models.mlp(), tmp_path / "kept.onnx")
    settings_path().parent.mkdir(parents=True)
    settings_path().write_text(json.dumps({"schema_version": 2, "current_model": str(tmp_path / "gone.onnx"),
                                           "open_models": [{"path": str(tmp_path / "gone.onnx"), "kind": "source"},
                                                           {"path": str(kept.resolve()), "kind": "source"}]}))
    win = new_window(qtbot)
    qtbot.waitUntil(lambda: win.current_model() is not None and win.current_model().summary is not None,
                    timeout=60000)
    assert [m.path for m in win.model_list.models()] == [str(kept.resolve())]
    win.jobs.shutdown()


def test_a_damaged_settings_file_is_kept_aside_and_the_user_told(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_CONFIG_DIR", str(tmp_path / "cfg"))
    settings_path().parent.mkdir(parents=True)
    settings_path().write_text('{"schema_version": 2, "recent_files": [')
    win = new_window(qtbot)
    qtbot.waitUntil(lambda: win.last_error is not None, timeout=10000)
    aside = [p for p in settings_path().parent.iterdir() if ".damaged-" in p.name]
    assert len(aside) == 1 and aside[0].read_text() == '{"schema_version": 2, "recent_files": ['
    assert aside[0].name in win.last_error[1]
    win.close()
    assert json.loads(settings_path().read_text())["schema_version"] == 2     # a new file beside the old
    assert aside[0].exists()


def test_a_newer_settings_file_is_kept_aside(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("ORTUNE_CONFIG_DIR", str(tmp_path / "cfg"))
    settings_path().parent.mkdir(parents=True)
    settings_path().write_text('{"schema_version": 7, "future": true}')
    win = new_window(qtbot)
    qtbot.waitUntil(lambda: win.last_error is not None, timeout=10000)
    assert "newer" in win.last_error[1]
    win.close()
    assert [p.read_text() for p in settings_path().parent.iterdir() if ".v7-" in p.name] == \
        ['{"schema_version": 7, "future": true}']


def test_quitting_with_a_running_job_asks_first(qtbot, window, monkeypatch):
    asked = []
    answer = [QMessageBox.StandardButton.No]
    monkeypatch.setattr(QMessageBox, "question", lambda *args, **kw: asked.append(args[2]) or answer[0])
    job = window.jobs.start("Wait for ever", COOPERATIVE)
    qtbot.waitUntil(lambda: job.message == "waiting", timeout=20000)
    assert window.close() is False
    assert window.isVisible() and job.state == "running"
    assert "Wait for ever" in asked[0]
    answer[0] = QMessageBox.StandardButton.Yes
    with qtbot.waitSignal(window.jobs.job_finished, timeout=30000):
        assert window.close() is True
    assert job.state == "cancelled" and len(asked) == 2


def test_quitting_with_nothing_running_does_not_ask(qtbot, window, monkeypatch):
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *args, **kw: asked.append(args) or QMessageBox.StandardButton.No)
    qtbot.waitUntil(lambda: not window.jobs.running(), timeout=20000)
    assert window.close() is True and asked == []
