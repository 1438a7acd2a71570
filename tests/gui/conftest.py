import pytest
import shiboken6
from PySide6.QtCore import QThread

from app.core.store.settings import Settings


@pytest.fixture(scope="package", autouse=True)
def widgets_die_in_the_gui_thread(qapp):
    """As the app does at start-up (app.gui.shell.collector): cyclic garbage is collected in the
    GUI thread only, or a job's worker thread may destroy a leftover widget tree while the GUI
    thread destroys it too (a deadlock). On again, after a full collection, past these tests."""
    from app.gui.shell.collector import collect_in_gui_thread

    collector = collect_in_gui_thread(qapp)
    yield collector
    collector.stop()


@pytest.fixture(autouse=True)
def no_dangling_qthreads(monkeypatch):
    """Fail any test that leaves a QThread running."""
    started = []
    original = QThread.start

    def recording_start(self, *args, **kwargs):
        started.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(QThread, "start", recording_start)
    yield started
    running = [t for t in started if shiboken6.isValid(t) and t.isRunning()]   # released ones are deleted
    for thread in running:
        thread.wait(10000)
    assert not running, f"{len(running)} QThread(s) left running"


@pytest.fixture(autouse=True)
def no_unexpected_questions(monkeypatch):
    """A modal question nobody answers would hang the test run: fail instead (a test that
    expects one monkeypatches QMessageBox.question itself). Closing a window at a test's end,
    with jobs still running, quits (test_window_memory checks that the window asks)."""
    from PySide6.QtWidgets import QMessageBox

    from app.gui.shell.main_window import QUIT_TITLE

    def unexpected(_parent, title, text, *args, **kwargs):
        if title == QUIT_TITLE:
            return QMessageBox.StandardButton.Yes
        raise AssertionError(f"unexpected question: {title}: {text}")

    monkeypatch.setattr(QMessageBox, "question", unexpected)


@pytest.fixture(autouse=True)
def own_output_folder(monkeypatch, tmp_path_factory):
    """Each test's Convert tab saves into a folder of its own (see app.core.store.paths.output_dir)."""
    folder = tmp_path_factory.mktemp("variants")
    monkeypatch.setenv("ORTUNE_OUTPUT_DIR", str(folder))
    return folder


@pytest.fixture
def window(qtbot):
    from app.gui.shell.main_window import MainWindow
    from app.gui.widgets.run_caption import SITTING

    SITTING.figures.clear()           # a window is a sitting: no figure of another test's beside its own
    win = MainWindow(Settings(), probe_providers=False)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.jobs.shutdown()


def wait_for_model(qtbot, window, timeout=60000):
    with qtbot.waitSignal(window.model_opened, timeout=timeout) as blocker:
        pass
    return blocker.args[0]
