"""Python's cyclic garbage collection, run from the GUI thread only.

Left on, the collector runs in whichever thread happens to allocate past its threshold, a job's
worker thread included. When a garbage cycle holds a widget, that thread then destroys the
widget while the GUI thread may be destroying the same tree: the two wait on each other (Qt's
mutex, Python's GIL) and the window hangs for good. So automatic collection is off and a timer
in the GUI thread collects on the same thresholds (pyqtgraph's util/garbage_collector.py)."""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

INTERVAL_MS = 250      # often enough that garbage does not pile up, rare enough to cost nothing


class GuiThreadCollector(QObject):
    """Owned by the application; collects on the timer, in the application's thread."""

    def __init__(self, app: QCoreApplication):
        super().__init__(app)
        self.setObjectName("gui-thread-collector")
        self.thresholds = gc.get_threshold()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.collect_due)
        self.start()

    def start(self) -> None:
        gc.disable()
        if not self.timer.isActive():
            self.timer.start(INTERVAL_MS)

    def collect_due(self) -> None:
        """Collect the generations whose counts passed their thresholds, as the interpreter would."""
        young, middle, old = gc.get_count()
        if young > self.thresholds[0]:
            gc.collect(0)
            if middle > self.thresholds[1]:
                gc.collect(1)
                if old > self.thresholds[2]:
                    gc.collect(2)

    def stop(self) -> None:
        """Automatic collection back on (tests that leave Qt behind); collects what is left first."""
        self.timer.stop()
        gc.collect()
        gc.enable()


def collect_in_gui_thread(app: QCoreApplication) -> GuiThreadCollector:
    """The application's collector, made on the first call (and started again if stopped)."""
    existing = app.findChild(GuiThreadCollector, "gui-thread-collector")
    if existing is None:
        return GuiThreadCollector(app)
    existing.start()
    return existing
