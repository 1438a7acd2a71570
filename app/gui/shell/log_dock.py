"""The Log dock: what jobs and the window report, newest last."""

from __future__ import annotations

import time

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit

from app.core.text import printable


class LogView(QPlainTextEdit):
    MAX_LINES = 5000

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setReadOnly(True)
        self.setMaximumBlockCount(self.MAX_LINES)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

    def add(self, source: str, level: str, message: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        # one line per entry: a message quoting a name from a file (or a peer) cannot add lines
        self.appendPlainText(f"{stamp} {level.upper():7} {printable(source)}: {printable(message, 2000)}")
