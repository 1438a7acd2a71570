"""What a tab may use of the window, and nothing more: the current model and the
selection, the session state, the job manager, the one place errors go, and "show this
result in its tab". Tabs never find each other (by title or otherwise) and never touch
another tab's widgets; they ask the context, which knows where each kind of result lives."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from app.gui.shell.plan_cost import recount

if TYPE_CHECKING:
    from app.core.jobs.entry import Job
    from app.core.session.state import SessionState
    from app.core.store.settings import Settings
    from app.gui.shell.jobs import JobManager
    from app.gui.shell.open_model import OpenModel


class PanelContext(QObject):
    model_changed = Signal(object)       # the current OpenModel (or None); again when its summary arrives
    providers_ready = Signal(object)     # the provider probe's result
    inputs_planned = Signal(str, object)  # a model's path and the input plan a job just ran it on
    node_chosen = Signal(str, str)       # a model's path and a node's name: a table row named it (the graph centres)
    result_made = Signal(object, str, object)  # the job entry, a model's path, a result another tab may draw (publish)

    def __init__(self, window, session: SessionState):
        super().__init__(window)
        self._window = window
        self.session = session
        self.jobs: JobManager = window.jobs
        self.settings: Settings = window.settings
        self._plans: dict[str, list[dict]] = {}
        # first, before any tab hears of the model: its own input sizes are in place for them
        self.model_changed.connect(lambda model: session.follow_model(None if model is None else model.path))
        self._latest: dict[tuple[str, str], dict] = {}
        self._chosen: tuple[str, str] | None = None
        self.inputs_planned.connect(lambda path, rows: recount(window, path, rows))     # the cost on real shapes

    # models ----------------------------------------------------------------------
    def current_model(self) -> OpenModel | None:
        return self._window.current_model()

    def selected_models(self) -> list[OpenModel]:
        """The models selected in the list, in the list's order."""
        models = self._window.model_list
        chosen = models.selected()
        return [m for m in models.models() if m in chosen]

    def model_at(self, path) -> OpenModel | None:
        """The open model or variant at `path`, if it is open."""
        return self._window.model_list.find(str(path))

    def open_model(self, path, *, parent: OpenModel | None = None, kind: str = "source",
                   extra: dict | None = None, reread: bool = False, select: bool = True) -> OpenModel:
        """Open a model (or a variant under `parent`); `reread`: it changed on disk, read it again;
        `select`: make it the current model."""
        if reread:
            stale = self._window.model_list.find(str(path))
            if stale is not None:
                self._window.model_list.remove(stale)
        return self._window.open_model(path, parent=parent, kind=kind, extra=extra, select=select)

    def select_models(self, models: list[OpenModel]) -> None:
        """Select these models in the list (the last is the current model), as Ctrl+click does."""
        self._window.model_list.select_many(models)

    def open_models(self) -> list[OpenModel]:
        """Every model in the list, in its order."""
        return self._window.model_list.models()

    @property
    def providers_info(self) -> dict | None:
        """The provider probe's result, or None before it arrives (see providers_ready)."""
        return self._window.providers_info

    # input plans -----------------------------------------------------------------
    def report_inputs(self, path: str, inputs: list[dict]) -> None:
        """A job ran the model at `path` on these inputs (the plan's rows): the Session tab shows
        where each came from, whichever tab ran it."""
        self._plans[str(path)] = list(inputs)
        self.inputs_planned.emit(str(path), list(inputs))

    def last_plan(self, path: str) -> list[dict] | None:
        return self._plans.get(str(path))

    # results other tabs draw, and nodes a table names --------------------------------
    def publish(self, job: Job, path: str, result: dict) -> None:
        """A tab made a result of `job` (its entry: PROFILE, PLACEMENT, DRIFT …) for the model at
        `path`: kept as that model's newest, for the tabs that draw it (the Graph tab's overlays)."""
        self._latest[(job, str(path))] = result
        self.result_made.emit(job, str(path), result)

    def latest(self, job: Job, path: str) -> dict | None:
        return self._latest.get((job, str(path)))

    def choose_node(self, path: str, name: str) -> None:
        """A table row names a node of the model at `path`."""
        self._chosen = (str(path), name)
        self.node_chosen.emit(str(path), name)

    def chosen_node(self) -> tuple[str, str] | None:
        return self._chosen

    def session_config(self, title: str, path: str | None = None):
        """The Session tab's settings for a job (on the model at `path`, with that model's inputs:
        SessionState.config_for), or None once a bad entry there is shown under `title`."""
        from app.core.jobs.errors import UserError
        try:
            return self.session.config_for(path)
        except UserError as exc:
            self.show_error(title, exc.message)
            return None

    # telling the user ------------------------------------------------------------
    def show_error(self, title: str, message: str) -> None:
        self._window.show_error(title, message)

    def show_status(self, message: str, timeout_ms: int = 5000) -> None:
        self._window.status_line.show_message(message, timeout_ms)

    def bring_up(self, title: str) -> None:
        """Bring the tab with this title to the front (it reads the selected models itself)."""
        self._window.tabs.setCurrentWidget(self._window.panel(title))

    def show_tab(self, panel) -> None:
        """Bring a panel's own tab to the front."""
        self._window.tabs.setCurrentWidget(panel)

    # results in their tabs -----------------------------------------------------------
    def show_result(self, job: Job, result: dict) -> None:
        """Show a result of the job `job` (e.g. a stored comparison or sweep) in the tab that makes it."""
        self._tab_for(job).open_result(job, result)

    def run_again(self, job: Job, entry: Any) -> None:
        """Start a stored run of `job` (a history entry: model, session, run settings) again in its
        tab; for a drift, the pair to look into (app.gui.shell.handover.DriftPair)."""
        self._tab_for(job).run_again(job, entry)

    def show_node(self, path: str, name: str) -> None:
        """Show a node of the model at `path` in the Graph tab's drawing."""
        self._open("Graph").choose(path, name)

    def _tab_for(self, job: Job):
        from app.gui.shell.result_views import RESULT_VIEWS

        if job not in RESULT_VIEWS:
            raise KeyError(f"no tab shows results of {job.name}")
        return self._open(RESULT_VIEWS[job].tab)

    def _open(self, title: str):
        panel = self._window.panel(title)
        panel.ensure_built()
        self.show_tab(panel)
        return panel
