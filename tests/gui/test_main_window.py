from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent

from app.core.jobs.errors import JobCancelled, JobFailed
from tests import bad_models, models
from tests.sample_jobs import ABORT, COOPERATIVE, INTERNAL_ERROR, STUBBORN


def drop_files(window, paths):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    event = QDropEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)


def test_dropping_a_model_opens_and_shows_it(qtbot, window, tmp_path):
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000) as opened:
        drop_files(window, [path])
    model = opened.args[0]
    assert model.summary["op_counts"]["Conv"] == 2
    assert window.current_model() is model
    overview = window.panel("Overview")
    overview.ensure_built()
    assert "cnn.onnx" in overview.heading.text()
    rows = overview.io_table.rows
    assert ["input", "x", "float", "[batch, 3, 32, 32]"] in rows
    assert overview.op_chart.labels[0] in ("Conv", "Relu")
    assert "cnn.onnx" in window.model_label.text()
    assert window.settings.recent_files[0] == str(path.resolve())


def test_several_models_can_be_open(qtbot, window, tmp_path):
    paths = [models.save(models.cnn(), tmp_path / "a.onnx"), models.save(models.mlp(), tmp_path / "b.onnx")]
    for path in paths:
        with qtbot.waitSignal(window.model_opened, timeout=60000):
            window.open_model(path)
    assert [m.label for m in window.model_list.models()] == ["a.onnx", "b.onnx"]
    window.open_model(paths[0])                # opening again selects, never duplicates
    assert len(window.model_list.models()) == 2
    assert window.current_model().label == "a.onnx"


def test_a_bad_file_shows_one_message_and_the_window_stays_usable(qtbot, window, tmp_path):
    bad, _ = bad_models.png(tmp_path)
    with qtbot.waitSignal(window.error_shown, timeout=60000) as shown:
        drop_files(window, [bad])
    title, message = shown.args
    assert "picture.onnx" in message and "PNG" in message
    assert window.model_list.models() == []
    good = models.save(models.mlp(), tmp_path / "good.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        drop_files(window, [good])
    assert window.current_model().summary is not None


def test_a_job_can_be_cancelled(qtbot, window):
    errors = []
    with qtbot.waitSignal(window.jobs.job_finished, timeout=30000):
        job = window.jobs.start("wait", COOPERATIVE, on_error=errors.append,
                                on_progress=lambda *_: job.cancel())
    assert job.state == "cancelled"
    assert isinstance(errors[0], JobCancelled)
    assert window.last_error is None      # a cancel is not an error


def test_escape_cancels_the_focused_job(qtbot, window):
    with qtbot.waitSignal(window.jobs.job_finished, timeout=30000):
        job = window.jobs.start("wait", STUBBORN)
        qtbot.waitUntil(lambda: job.message == "stuck", timeout=20000)
        qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert job.state == "cancelled"


def test_a_crashing_child_leaves_the_window_alive_with_a_message(qtbot, window, tmp_path):
    with qtbot.waitSignal(window.error_shown, timeout=30000) as shown:
        job = window.jobs.start("crash test", ABORT)
    assert job.state == "failed"
    assert isinstance(job.error, JobFailed)
    assert "crashed" in shown.args[1] and "SIGABRT" in shown.args[1]
    path = models.save(models.mlp(), tmp_path / "after.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(path)


def test_internal_errors_name_a_log_file(qtbot, window):
    with qtbot.waitSignal(window.error_shown, timeout=30000) as shown:
        window.jobs.start("broken", INTERNAL_ERROR)
    message = shown.args[1]
    assert "ZeroDivisionError" in message and ".log" in message


def test_provider_check_fills_the_status_bar(qtbot, window):
    with qtbot.waitSignal(window.providers_ready, timeout=60000):
        window.check_providers()
    assert "cpu" in window.providers_label.text()
    assert "ONNX Runtime" in window.ort_label.text()
    names = [p["name"] for p in window.providers_info["providers"]]
    assert "CUDAExecutionProvider" in names and "DmlExecutionProvider" in names


def test_settings_are_saved_on_close(qtbot, tmp_path, monkeypatch):
    from app.core.store.settings import load_settings
    from app.gui.shell.main_window import MainWindow

    monkeypatch.setenv("ORTUNE_CONFIG_DIR", str(tmp_path / "cfg"))
    win = MainWindow(probe_providers=False)
    qtbot.addWidget(win)
    win.settings.add_recent(tmp_path / "x.onnx")
    win.close()
    saved = load_settings()
    assert saved.recent_files == [str((tmp_path / "x.onnx").resolve())]
    assert saved.window_geometry


def test_signal_emission_keeps_reference_counts():
    """PySide6 6.12.0 drops a reference to True on every emission, which crashes
    Python 3.11 at exit; this guards the pin in pyproject.toml."""
    import gc
    import sys

    from PySide6.QtCore import QObject, Signal

    class Source(QObject):
        fired = Signal(object)

    source = Source()
    source.fired.connect(lambda value: None)
    gc.collect()
    before = sys.getrefcount(True)
    for _ in range(200):
        source.fired.emit(1.0)
    gc.collect()
    assert abs(sys.getrefcount(True) - before) < 50


def test_three_models_and_three_broken_files_dropped_together(qtbot, window, tmp_path):
    good = [models.save(models.cnn(), tmp_path / "cnn.onnx"), models.save(models.mlp(), tmp_path / "mlp.onnx"),
            models.save(models.transformer_block(), tmp_path / "block.onnx")]
    bad = [maker(tmp_path)[0] for maker in (bad_models.png, bad_models.truncated, bad_models.cycle)]
    errors = []
    window.error_shown.connect(lambda title, message: errors.append(message))
    drop_files(window, good + bad)
    qtbot.waitUntil(lambda: len(errors) == 3 and all(m.summary for m in window.model_list.models()), timeout=90000)
    assert sorted(m.label for m in window.model_list.models()) == ["block.onnx", "cnn.onnx", "mlp.onnx"]
    for path in bad:
        assert sum(path.name in message for message in errors) == 1
    assert all("Traceback" not in message for message in errors)
