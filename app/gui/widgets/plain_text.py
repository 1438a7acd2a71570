"""Text from files and peers where Qt guesses the format (tooltips, message boxes, table
cells' tips): a name like `<img src=...>` must read as written, never as markup."""

from __future__ import annotations

import html

from PySide6.QtGui import Qt


def plain(text: str) -> str:
    """`text` for a place that shows markup when the text looks like it: unchanged when
    Qt would show it as text anyway, else escaped inside a rich-text wrapper."""
    if not Qt.mightBeRichText(text):
        return text
    return "<qt>" + html.escape(text, quote=False).replace("\n", "<br>") + "</qt>"
