"""Starting the window."""

from __future__ import annotations

import os
import sys
import time

from app.core.store.paths import demo_model_path


def run_application(paths: list[str], demo: bool = False) -> int:
    from PySide6.QtCore import QObject, QEvent
    from PySide6.QtWidgets import QApplication

    import app
    from app.core.store.settings import load_settings
    from app.gui.shell.collector import collect_in_gui_thread
    from app.gui.shell.main_window import MainWindow

    keep_crash_log()
    qt_app = QApplication.instance() or QApplication(sys.argv[:1])
    collect_in_gui_thread(qt_app)    # before any job's thread exists: widgets die in this thread only
    qt_app.setApplicationName(app.APP_NAME)
    qt_app.setApplicationVersion(app.__version__)
    qt_app.setDesktopFileName("ortune")
    _set_icon(qt_app)
    window = MainWindow(load_settings(set_aside=True))

    if os.environ.get("ORTUNE_STARTUP_PROBE"):
        # benchmarks/startup.py: report when the window first paints, then leave.
        class FirstPaint(QObject):
            def eventFilter(self, obj, event):
                if event.type() == QEvent.Type.Paint:
                    print(f"painted {time.time():.6f}", flush=True)
                    os._exit(0)
                return False

        probe = FirstPaint()
        window.installEventFilter(probe)

    window.show()
    targets = list(paths)
    if demo:
        targets.append(str(demo_model_path()))
    if targets:
        window.after_first_paint(lambda: window.open_paths(targets))
    return qt_app.exec()


#: the open crash log: faulthandler writes into it when native code (Qt, ONNX Runtime) faults
_CRASH_LOG = []
CRASH_LOG_BYTES = 1 << 20


def keep_crash_log() -> None:
    """A fault in native code ends the window with no Python traceback: faulthandler writes the
    stack of every thread to logs/crash.log instead, with the time the window started, for a
    bug report (app.gui.shell.about names the folder). A log that cannot be opened is skipped."""
    import faulthandler

    from app.core.store.paths import log_dir

    path = log_dir() / "crash.log"
    try:
        log_dir().mkdir(parents=True, exist_ok=True)
        # each start adds a line: a log past CRASH_LOG_BYTES starts again rather than grow for ever
        mode = "w" if path.is_file() and path.stat().st_size > CRASH_LOG_BYTES else "a"
        log = open(path, mode, encoding="utf-8")     # noqa: SIM115 (open for the process's life)
    except OSError:
        return
    log.write(f"--- ORTune window started {time.strftime('%Y-%m-%d %H:%M:%S')} (pid {os.getpid()})\n")
    log.flush()
    faulthandler.enable(file=log, all_threads=True)
    _CRASH_LOG.append(log)


def _set_icon(qt_app) -> None:
    from PySide6.QtGui import QIcon
    from app.core.store.paths import resources_dir

    icon = resources_dir() / "icons" / "ortune.svg"
    if icon.exists():
        qt_app.setWindowIcon(QIcon(str(icon)))
