"""Text that may not fit: a label that elides with "…" and shows the whole text as its
tooltip (long metadata, costs, status messages, a model's name and size)."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLabel, QSizePolicy

from app.gui.widgets.plain_text import plain


def breakable(name: str) -> str:
    """A file name a word-wrapped label may break after "_", "." or "-" (a zero-width space there):
    a long name with no spaces otherwise runs out of its label."""
    for mark in "_.-":
        name = name.replace(mark, mark + "\u200b")
    return name


class ElidedLabel(QLabel):
    """One line of plain text, cut with "…" to the space it gets; text() gives the whole text.
    `middle`: cut in the middle, keeping the end (a name followed by its size)."""

    def __init__(self, text: str = "", parent=None, minimum_width: int = 40, middle: bool = False):
        super().__init__(parent)
        self._middle = middle
        self._full = ""
        self._tip = ""             # a tooltip of the caller's own, shown instead of the whole text
        self._plain = False
        self._minimum_width = minimum_width
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802  (Qt's naming)
        if "<" in text and not self._plain:
            from PySide6.QtCore import Qt   # not at module level: Qt's namespace is slow to load at start-up
            self.setTextFormat(Qt.TextFormat.PlainText)      # never read a message as markup
            self._plain = True
        self._full = text
        self._elide()
        self.updateGeometry()

    def text(self) -> str:
        return self._full

    def setToolTip(self, tip: str) -> None:  # noqa: N802
        self._tip = tip
        self._elide()

    def is_elided(self) -> bool:
        return super().text() != self._full

    def sizeHint(self) -> QSize:  # noqa: N802
        margins = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(" ".join(self._full.split())) + 8 + margins.left() + margins.right()
        return QSize(width, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(self._minimum_width, super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        self._elide()

    def _elide(self) -> None:
        # Qt's namespace (the elide mode) only when the text does not fit: it is slow to load at start-up.
        shown = " ".join(self._full.split())          # one line, however the text was written
        room = self.contentsRect().width() - 4
        if shown and self.isVisible() and self.fontMetrics().horizontalAdvance(shown) > room:
            from PySide6.QtCore import Qt
            mode = Qt.TextElideMode.ElideMiddle if self._middle else Qt.TextElideMode.ElideRight
            shown = self.fontMetrics().elidedText(shown, mode, max(0, room))
        QLabel.setText(self, shown)
        QLabel.setToolTip(self, plain(self._tip or (self._full if shown != self._full else "")))


class WrappedLabel(QLabel):
    """A word-wrapped label that keeps all its lines where a layout squeezes it (a small window):
    its least height is the height its text takes at the width it has, not Qt's guess at a
    roomier width, so no line is cut off at the top or the bottom."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setWordWrap(True)
        self._height = -1

    def setText(self, text: str) -> None:  # noqa: N802
        super().setText(text)
        self._rewrapped()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._rewrapped()

    def _rewrapped(self) -> None:
        # a minimum height of its own: layouts (a box in a squeezed splitter) honour it where they
        # do not ask a label its height for its width
        height = self.heightForWidth(self.width()) if self.width() > 0 else -1
        if height != self._height:          # only when the lines changed: no layout loop
            self._height = height
            self.setMinimumHeight(max(0, height))
