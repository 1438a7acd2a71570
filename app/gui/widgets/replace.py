"""The one question before a file (or files) the user chose is replaced: outputs never
overwrite an existing file without consent."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from app.gui.widgets.plain_text import plain


def confirm_replace(parent: QWidget, paths: Path | list[Path], with_what: str = "") -> bool:
    """Ask whether to replace `paths` that already exist (with `with_what`, e.g. "the repaired
    variant"); No is the default. The names are shown as plain text: they may come from a model."""
    paths = [paths] if isinstance(paths, Path) else list(paths)
    if len(paths) == 1:
        title, text = "Replace the file?", f"{paths[0]} already exists. Replace it"
    else:
        title, text = "Replace the files?", (f"{', '.join(p.name for p in paths)} already exist in "
                                             f"{paths[0].parent}. Replace them")
    text += f" with {with_what}?" if with_what else "?"
    answer = QMessageBox.question(parent, title, plain(text),
                                  QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                  QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes
