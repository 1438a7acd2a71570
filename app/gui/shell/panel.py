"""The base of every tab: it acts on the current model and builds its widgets
lazily, so the window paints before pyqtgraph and friends are imported."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget


class Panel(QWidget):
    title = "Panel"

    def __init__(self, window):
        super().__init__()
        self.window = window
        self.model = None
        self.built = False
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(6, 6, 6, 6)

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

    # helpers -----------------------------------------------------------------
    @property
    def jobs(self):
        return self.window.jobs


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
