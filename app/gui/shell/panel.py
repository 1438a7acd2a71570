"""The base of every tab: it acts on the current model and builds its widgets
lazily, so the window paints before pyqtgraph and friends are imported. A tab knows
the window only through its PanelContext (app.gui.shell.context).

A tab's widgets sit in a scroll area: a small window scrolls the tab instead of squeezing
its plots and tables to slivers (or growing past the screen)."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QFrame, QGraphicsView, QScrollArea, QSplitter, QVBoxLayout, QWidget

from app.gui.shell.remember import set_widget_values, widget_values

#: the smallest a plot gets (pyqtgraph's own minimum is a few pixels)
MIN_PLOT = QSize(160, 150)


class _Body(QWidget):
    """A tab's contents. With word-wrapped labels inside, a scroll area sizes its widget by
    heightForWidth, which Qt answers with the preferred height (plots at their roomy size hint),
    so it scrolled while the tab fitted: answer with the least height instead (the contents'
    minimum, in which Qt already counts room for wrapped text)."""

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self.minimumSizeHint().height()


class Panel(QWidget):
    title = "Panel"
    control = None          # the tab's JobControl (app.gui.shell.job_control), for a tab that runs a job

    def __init__(self, context):
        super().__init__()
        self.context = context
        self.model = None
        self.built = False
        self.body = _Body()
        self.layout_ = QVBoxLayout(self.body)
        self.layout_.setContentsMargins(6, 6, 6, 6)
        scroll = QScrollArea()
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        context.model_changed.connect(self.set_model)

    def ensure_built(self) -> None:
        if not self.built:
            self.built = True
            self.build()
            self._keep_usable()
            self.restore_settings(self.context.settings.panels.get(self.title, {}))
            self.model_changed(self.model)

    def _keep_usable(self) -> None:
        """No pane collapses to nothing and no plot shrinks below MIN_PLOT: a small window
        scrolls the tab instead."""
        for splitter in self.body.findChildren(QSplitter):
            splitter.setChildrenCollapsible(False)
        for view in self.body.findChildren(QGraphicsView):
            view.setMinimumSize(max(view.minimumWidth(), MIN_PLOT.width()),
                                max(view.minimumHeight(), MIN_PLOT.height()))

    def set_model(self, model) -> None:
        self.model = model
        if self.built:
            self.model_changed(model)

    # settings kept between runs of the window -----------------------------------
    def saved_settings(self) -> dict:
        """This tab's settings as they stand (built tabs only), for the settings file."""
        return widget_values(self.remembered())

    def restore_settings(self, values: dict) -> None:
        """Set the remembered widgets from a saved dict; unknown keys and bad values are skipped."""
        set_widget_values(self.remembered(), values)

    # to override -------------------------------------------------------------
    def build(self) -> None:
        """Create the widgets (called once, on first use)."""

    def remembered(self) -> dict[str, QWidget]:
        """The widgets whose values the window keeps from one run to the next, by a stable
        name, in the order they are restored (a choice that resets others comes first)."""
        return {}

    def model_changed(self, model) -> None:
        """The current model changed, or its summary arrived."""

    def open_result(self, job, result: dict) -> None:
        """Show a stored result of the job entry `job` (for the entries result_views sends here)."""
        raise NotImplementedError(f"{type(self).__name__} does not show {job.name} results")

    def run_again(self, job, entry: dict) -> None:
        """Start a stored run of the job entry `job` again (a history entry: model, session, run settings)."""
        raise NotImplementedError(f"{type(self).__name__} does not run {job.name} again")

    # helpers -----------------------------------------------------------------
    @property
    def jobs(self):
        return self.context.jobs

    @property
    def job(self):
        """The job this tab runs now (None when none does)."""
        return self.control.job if self.control is not None else None
