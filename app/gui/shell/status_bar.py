"""The status bar: a message on the left (cut with "…" before it reaches the permanent
labels, its whole text as a tooltip) and, on the right, the current model, the providers
and the ONNX Runtime version."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QSizePolicy

from app.gui.widgets.clipped import ElidedLabel


class StatusLine:
    def __init__(self, status_bar):
        self.message = ElidedLabel(minimum_width=60)
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.message.setContentsMargins(4, 0, 16, 0)     # a gap before the first permanent label
        self.model_label = ElidedLabel(minimum_width=120, middle=True)     # keeps the size at its end
        self.model_label.setMaximumWidth(320)
        self.providers_label = ElidedLabel(minimum_width=80)
        self.ort_label = ElidedLabel("ONNX Runtime: checking…", minimum_width=80)
        status_bar.addWidget(self.message, 1)
        for label in (self.model_label, self.providers_label, self.ort_label):
            status_bar.addPermanentWidget(label)
        self._clear = QTimer(status_bar)
        self._clear.setSingleShot(True)
        self._clear.timeout.connect(lambda: self.message.setText(""))

    def show_message(self, text: str, timeout_ms: int = 5000) -> None:
        """Show `text` for `timeout_ms` (0: until the next message)."""
        self.message.setText(text)
        self._clear.stop()
        if timeout_ms:
            self._clear.start(timeout_ms)
