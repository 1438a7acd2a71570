"""The main window: open models on the left, one tab per job, Jobs and Log docks."""

from __future__ import annotations

import base64
import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, QTimer, Signal
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QSplitter, QTabWidget, QWidget

import app
from app.core.jobs.errors import UserError
from app.core.store.settings import Settings, save_settings
from app.core.formatting import human_bytes
from app.core.session.state import SessionState
from app.gui.shell.context import PanelContext
from app.gui.shell.fit import compact_tabs, fit_to_screen
from app.gui.shell.jobs import JobManager
from app.gui.shell.menus import build_menus
from app.gui.shell.provider_check import follow_libraries, start_check
from app.gui.shell.status_bar import StatusLine
from app.gui.shell.tabs import DROP_TARGETS, PANELS
from app.gui.widgets.plain_text import plain

if TYPE_CHECKING:
    from app.gui.shell.open_model import OpenModel

MODEL_FILTER = "Models (*.onnx *.ort);;All files (*)"
#: the title of the question asked before quitting stops running jobs
QUIT_TITLE = "Quit ORTune?"
#: the narrowest the model list gets (the splitter never collapses it)
MODEL_LIST_MIN_WIDTH = 170


class MainWindow(QMainWindow):
    error_shown = Signal(str, str)        # title, message
    model_opened = Signal(object)         # OpenModel, once its summary is read
    providers_ready = Signal(object)      # the provider probe's result

    def __init__(self, settings: Settings | None = None, probe_providers: bool = True):
        self._painted = False
        self._waiting_for_paint: list = []
        super().__init__()
        self.settings = settings or Settings()
        self.providers_info: dict | None = None
        self.last_error: tuple[str, str] | None = None
        self.jobs = JobManager(self, keep_finished=self.settings.finished_jobs_kept)
        self.jobs.job_failed.connect(self._job_failed)
        self.session = SessionState()          # the setup every model job runs with
        self.context = PanelContext(self, self.session)
        self.providers_ready.connect(self.context.providers_ready)
        self.setWindowTitle(app.APP_NAME)
        self.setAcceptDrops(True)

        self._model_list = None
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        compact_tabs(self.tabs)
        # Tabs start as empty placeholders; a panel's module is imported when the tab is
        # first shown or the panel is first asked for (start-up time).
        self._built_panels: dict[str, object] = {}
        self._panel_titles = [title for title, _, _ in PANELS]
        for title in self._panel_titles:
            self.tabs.addTab(QWidget(), title)
        self.tabs.currentChanged.connect(lambda _: self._build_current_panel())
        splitter = QSplitter()                 # horizontal
        # The tree is built on first use (after the first paint): item views cost ~15 ms.
        splitter.addWidget(QWidget())
        splitter.addWidget(self.tabs)
        splitter.setSizes([230, 1000])
        splitter.setStretchFactor(1, 1)
        splitter.setCollapsible(0, False)
        splitter.setCollapsible(1, False)
        self.splitter = splitter
        self.setCentralWidget(splitter)

        self._jobs_table = None
        self.jobs_dock = self.log_dock = None
        self.log_view = None
        self._early_log: list[tuple[str, str, str]] = []
        self.jobs.log.connect(self.log)
        self.jobs.job_added.connect(lambda _job: self.jobs_table)
        self.jobs.job_added.connect(lambda job: self.log(job.title, "info", "started"))
        self.jobs.job_finished.connect(lambda job: self.log(job.title, "info", job.state))

        self.status_line = StatusLine(self.statusBar())
        self.ort_label = self.status_line.ort_label
        self.providers_label = self.status_line.providers_label
        self.model_label = self.status_line.model_label
        self.view_menu, self.recent_menu = build_menus(self)
        self._restore_geometry()
        fit_to_screen(self)
        self._probe_providers = probe_providers
        follow_libraries(self)

    def _build_docks(self) -> None:
        """The Jobs and Log docks, right after the first paint: docking pulls in Qt's
        namespace enums, which cost ~25 ms of start-up, for two docks that start empty."""
        if self.jobs_dock is not None:
            return
        from PySide6.QtCore import Qt  # Qt's namespace costs ~25 ms to load: never at start-up
        from app.gui.shell.log_dock import LogView  # its fixed-width font loads the font database (~8 ms)
        self.log_view = LogView()
        for line in self._early_log:
            self.log_view.add(*line)
        self._early_log.clear()
        self.jobs_dock = self._dock("Jobs", QWidget())
        self.log_dock = self._dock("Log", self.log_view)
        self.tabifyDockWidget(self.jobs_dock, self.log_dock)
        self.jobs_dock.raise_()
        self.view_menu.addAction(self.jobs_dock.toggleViewAction())
        self.view_menu.addAction(self.log_dock.toggleViewAction())
        if self.settings.window_state:
            try:
                self.restoreState(QByteArray(base64.b64decode(self.settings.window_state)))
            except (ValueError, TypeError):
                pass

    def event(self, event) -> bool:
        if not getattr(self, "_painted", True) and event.type() == QEvent.Type.Paint:
            # Heavy work (pyqtgraph, the provider probe) waits until the window is on screen.
            self._painted = True
            QTimer.singleShot(0, self._after_first_paint)
        return super().event(event)

    def log(self, source: str, level: str, message: str) -> None:
        """A line in the Log dock (kept until the dock exists)."""
        if self.log_view is None:
            self._early_log.append((source, level, message))
        else:
            self.log_view.add(source, level, message)

    @property
    def model_list(self):
        if self._model_list is None:
            from app.gui.shell.model_list import ModelList
            self._model_list = ModelList()
            self._model_list.setMinimumWidth(MODEL_LIST_MIN_WIDTH)
            self._model_list.current_changed.connect(self._current_changed)
            self.splitter.replaceWidget(0, self._model_list)
        return self._model_list

    @property
    def jobs_table(self):
        if self._jobs_table is None:
            self._build_docks()
            from app.gui.shell.jobs_dock import JobsTable
            self._jobs_table = JobsTable(self.jobs)
            self.jobs_dock.setWidget(self._jobs_table)
            if not self.settings.window_state:
                from PySide6.QtCore import Qt
                self.resizeDocks([self.jobs_dock], [self.jobs_dock.minimumSizeHint().height()],
                                 Qt.Orientation.Vertical)
        return self._jobs_table

    def _after_first_paint(self) -> None:
        # The system's colour scheme, before any panel picks its plot colours; not before the first
        # paint, since asking loads Qt's namespace (~50 ms of start-up).
        from app.gui.widgets.theme import follow_system
        follow_system(QApplication.instance())
        self.model_list
        self._build_docks()
        self.jobs_table
        self._build_current_panel()
        if self._probe_providers:
            self.check_providers()
        if self.settings.set_aside_note:
            self.show_error("Settings", self.settings.set_aside_note)
        from app.gui.shell.restore import restore
        restore(self)
        for work in self._waiting_for_paint:
            work()
        self._waiting_for_paint.clear()

    def after_first_paint(self, work) -> None:
        """Run `work` once the window is on screen (at once if it already is)."""
        if self._painted:
            work()
        else:
            self._waiting_for_paint.append(work)

    # layout ----------------------------------------------------------------
    def _dock(self, title: str, widget) -> QDockWidget:
        from PySide6.QtCore import Qt
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{title}Dock")
        dock.setWidget(widget)
        # Docked, the tab below names it: no title bar, which leaves the tabs its 20 px. Floating, it
        # has one again (to move it by).
        dock.setTitleBarWidget(QWidget())
        dock.topLevelChanged.connect(lambda floating: dock.setTitleBarWidget(None if floating else QWidget()))
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        return dock

    def _restore_geometry(self) -> None:
        try:
            if self.settings.window_geometry:
                self.restoreGeometry(QByteArray(base64.b64decode(self.settings.window_geometry)))
        except (ValueError, TypeError):
            pass

    # panels ----------------------------------------------------------------
    def _build_current_panel(self) -> None:
        index = self.tabs.currentIndex()
        if index >= 0:
            self.panel(self._panel_titles[index]).ensure_built()

    @property
    def panels(self) -> list:
        return list(self._built_panels.values())

    def panel(self, title: str):
        """The panel of a tab (created on first request), or None for an unknown title."""
        if title in self._built_panels:
            return self._built_panels[title]
        entry = next((e for e in PANELS if e[0] == title), None)
        if entry is None:
            return None
        _, module_name, class_name = entry
        panel = getattr(importlib.import_module(module_name), class_name)(self.context)
        self._built_panels[title] = panel
        index = self._panel_titles.index(title)
        current = self.tabs.currentIndex()
        self.tabs.blockSignals(True)
        placeholder = self.tabs.widget(index)
        self.tabs.removeTab(index)
        self.tabs.insertTab(index, panel, title)
        self.tabs.setCurrentIndex(current)
        self.tabs.blockSignals(False)
        placeholder.deleteLater()
        panel.set_model(self.model_list.current() if self._model_list is not None else None)
        return panel

    def current_model(self) -> OpenModel | None:
        return self.model_list.current()

    def _current_changed(self, model: OpenModel | None) -> None:
        self.context.model_changed.emit(model)
        self._update_model_label(model)

    def _update_model_label(self, model: OpenModel | None) -> None:
        if model is None or model.summary is None:
            self.model_label.setText("" if model is None else f"{model.label}: reading…")
        else:
            self.model_label.setText(f"{model.label}: {human_bytes(model.summary['total_bytes'])}")

    # opening models ----------------------------------------------------------
    def open_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog
        paths, _ = QFileDialog.getOpenFileNames(self, "Open models", self.settings.last_open_dir, MODEL_FILTER)
        for path in paths:
            self.open_model(path)

    def open_paths(self, paths) -> None:
        for path in paths:
            target = DROP_TARGETS.get(Path(path).suffix.lower())
            if target is None:
                self.open_model(path)
                continue
            title, method = target
            panel = self.panel(title)
            self.tabs.setCurrentWidget(panel)
            getattr(panel, method)(str(path))

    def open_model(self, path, parent: OpenModel | None = None, kind: str = "source",
                   label: str = "", extra: dict | None = None, select: bool = True) -> OpenModel:
        """Add a model to the list (or select it if it is open) and read it in the background;
        `select`: make it the current model (a new variant leaves its source selected)."""
        existing = self.model_list.find(str(path))
        if existing is not None:
            if select:
                self.model_list.select(existing)
            return existing
        from app.gui.shell.open_model import OpenModel
        model = OpenModel(str(path), label=label, kind=kind, parent=parent, extra=dict(extra or {}))
        self.model_list.add(model)
        if select:
            self.model_list.select(model)

        def done(summary: dict) -> None:
            model.summary = summary
            self.model_list.refresh(model)
            if self.model_list.current() is model:
                self._current_changed(model)
            if model.kind == "source":
                self.settings.add_recent(model.path)
                self.settings.last_open_dir = str(Path(model.path).parent)
            self.model_opened.emit(model)

        def failed(_exc) -> None:
            self.model_list.remove(model)

        from app.core.graph.jobs import SUMMARY, CostParams
        self.jobs.start(f"Read {model.label}", SUMMARY, CostParams(path=model.path),
                        on_result=done, on_error=failed)
        return model

    def close_current(self) -> None:
        model = self.current_model()
        if model is not None:
            self.model_list.remove(model)

    # drag and drop -----------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dragMoveEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_paths(paths)

    # jobs and errors -----------------------------------------------------------
    def cancel_focused_job(self) -> None:
        job = self.jobs_table.focused_job()
        if job is not None:
            job.cancel()

    def _job_failed(self, job, exc) -> None:
        from app.core.runner.failure import describe_failure

        failure = describe_failure(exc)
        where = f"\n\nThe details are in {failure.log}" if failure.log else ""
        self.show_error(job.title, (failure.line if failure.kind != "internal"
                                    else f"Internal error: {failure.message}{where}"))

    def show_error(self, title: str, message: str) -> None:
        """The one place errors reach the user: a message that never blocks the window."""
        self.last_error = (title, message)
        self.log(title, "error", message)
        self.status_line.show_message(f"{title}: {message}", 15000)
        from PySide6.QtWidgets import QMessageBox
        box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, self)
        from PySide6.QtCore import Qt
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.error_shown.emit(title, message)

    # providers ---------------------------------------------------------------
    def check_providers(self) -> None:
        start_check(self)

    def providers_checked(self, info: dict) -> None:
        """The provider probe's result arrived: the status bar says it, and every tab hears it."""
        self.providers_info = info
        usable = [p["short"] for p in info["providers"] if p["available"]]
        self.ort_label.setText(f"ONNX Runtime {info['ort_version']} ({info['package'].split()[0]})")
        self.providers_label.setText("Providers: " + ", ".join(usable))
        unusable = [f"{p['name']}: {p['reason']}" for p in info["providers"] if not p["available"]]
        self.providers_label.setToolTip("\n".join(unusable))
        self.providers_ready.emit(info)

    def show_providers(self) -> None:
        from app.gui.shell.providers_dialog import ProvidersDialog
        from PySide6.QtCore import Qt
        dialog = ProvidersDialog(self.providers_info, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.providers_ready.connect(dialog.set_info)
        dialog.open()

    def show_about(self) -> None:
        from app.gui.shell.about import show_about
        show_about(self, self.providers_info)

    # closing -------------------------------------------------------------------
    def closeEvent(self, event) -> None:
        # Jobs whose thread still runs: one cancelled a moment ago has not heard back yet.
        running = [job for job in self.jobs.running() if job.thread is not None and job.thread.isRunning()]
        if running and not self.confirm_quit(running):
            event.ignore()
            return
        from app.gui.shell.restore import remember
        remember(self)
        self.settings.window_geometry = base64.b64encode(bytes(self.saveGeometry())).decode()
        self.settings.window_state = base64.b64encode(bytes(self.saveState())).decode()
        try:
            save_settings(self.settings)
        except (OSError, UserError) as exc:      # UserError: a full disk, named
            self.log("Settings", "warning", f"could not save settings: {exc}")
        self.jobs.shutdown()
        super().closeEvent(event)

    def confirm_quit(self, running: list) -> bool:
        """Ask before quitting stops running jobs; True: quit."""
        from PySide6.QtWidgets import QMessageBox
        names = ", ".join(job.title for job in running[:3]) + (" …" if len(running) > 3 else "")
        count = f"{len(running)} jobs are" if len(running) > 1 else "A job is"
        answer = QMessageBox.question(self, QUIT_TITLE, plain(f"{count} still running ({names}). Quitting stops "
                                                                "them, and what they have not finished is lost. "
                                                                "Quit anyway?"),
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes
