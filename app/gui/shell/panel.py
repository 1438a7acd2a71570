"""The base of every tab: it acts on the current model and builds its widgets
lazily, so the window paints before pyqtgraph and friends are imported. A tab knows
the window only through its PanelContext (app.gui.shell.context)."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget


class Panel(QWidget):
    title = "Panel"

    def __init__(self, context):
        super().__init__()
        self.context = context
        self.model = None
        self.built = False
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(6, 6, 6, 6)
        context.model_changed.connect(self.set_model)

    def ensure_built(self) -> None:
        if not self.built:
            self.built = True
            self.build()
            self.model_changed(self.model)

    def set_model(self, model) -> None:
        self.model = model
        if self.built:
            self.model_changed(model)

    # to override -------------------------------------------------------------
    def build(self) -> None:
        """Create the widgets (called once, on first use)."""

    def model_changed(self, model) -> None:
        """The current model changed, or its summary arrived."""

    def open_result(self, kind: str, result: dict) -> None:
        """Show a stored result of `kind` (for the kinds tabs.RESULT_TABS sends here)."""
        raise NotImplementedError(f"{type(self).__name__} does not show {kind!r} results")

    def run_again(self, kind: str, entry: dict) -> None:
        """Start a stored run of `kind` again (a history entry: model, session, run settings)."""
        raise NotImplementedError(f"{type(self).__name__} does not run {kind!r} again")

    # helpers -----------------------------------------------------------------
    @property
    def jobs(self):
        return self.context.jobs


class OneJobView:
    """For a view that runs one job at a time behind Start and Cancel buttons: it makes
    self.start_button, self.cancel_button and self.status, starts its job with
    on_result=self._on_result and on_error=self._on_error, and shows a result in
    show_result."""

    job = None

    def _finished(self) -> None:
        self.job = None
        self.start_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def _on_error(self, exc) -> None:
        self._finished()
        self.status.setText(f"Stopped: {getattr(exc, 'message', exc)}")

    def _on_result(self, result: dict) -> None:
        self._finished()
        self.show_result(result)

    def show_result(self, result: dict) -> None:
        raise NotImplementedError
