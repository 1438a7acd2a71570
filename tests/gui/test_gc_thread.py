"""Cyclic garbage that holds widgets is collected in the GUI thread only. Collected in a job's
worker thread, a leftover widget tree was destroyed there while the GUI thread destroyed the
same tree: each waited on the other for good (a whole CI run hung)."""

import gc
import threading
import weakref

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication, QMenu

from app.gui.shell import application
from app.gui.shell.collector import GuiThreadCollector


class Allocating(QThread):
    """A worker thread that allocates as a job's bridge does, far past gen-0's threshold,
    and keeps what it made (a job's events and result)."""

    def run(self):
        self.kept = [[index] for index in range(20000)]


def widget_cycles(count):
    """Menus kept alive only by a Python reference cycle, as a widget that refers to itself makes."""
    refs = []
    for _ in range(count):
        menu = QMenu()
        menu.itself = menu
        refs.append(weakref.ref(menu))
    return refs


def test_a_worker_thread_that_allocates_never_collects_widget_cycles(qtbot):
    collecting_threads = []

    def record(phase, _info):
        if phase == "start":
            collecting_threads.append(threading.current_thread())

    refs = widget_cycles(20)
    gc.callbacks.append(record)
    try:
        worker = Allocating()
        worker.start()
        qtbot.waitUntil(worker.isFinished, timeout=60000)
        worker.wait()
        qtbot.waitUntil(lambda: all(ref() is None for ref in refs), timeout=10000)
    finally:
        gc.callbacks.remove(record)
    assert collecting_threads, "the widget cycles were collected"
    assert set(collecting_threads) == {threading.main_thread()}


def test_the_application_collects_in_its_own_thread_from_the_start(qtbot, monkeypatch):
    class Window:                           # the real one is tested elsewhere; start-up is what counts
        def __init__(self, settings):
            pass

        def show(self):
            pass

    monkeypatch.setattr("app.gui.shell.main_window.MainWindow", Window)
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    assert application.run_application([]) == 0
    collector = QApplication.instance().findChild(GuiThreadCollector, "gui-thread-collector")
    assert collector is not None and collector.timer.isActive() and not gc.isenabled()
