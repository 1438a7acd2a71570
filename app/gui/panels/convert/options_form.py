"""The Convert tab's option form, built from a kind's option table, and its path field."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QWidget)

from app.core.convert.options import Option


class OptionsForm(QWidget):
    """One editor per option, each with the option's help as its tooltip."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.editors: dict[str, tuple[Option, QWidget]] = {}

    def set_options(self, options: tuple[Option, ...]) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.editors = {}
        for option in options:
            editor = self._editor(option)
            editor.setToolTip(option.help)
            label = QLabel(option.title + ":")
            label.setToolTip(option.help)
            self.form.addRow(label, editor)
            self.editors[option.name] = (option, editor)

    def _editor(self, option: Option) -> QWidget:
        if option.kind == "bool":
            editor = QCheckBox()
            editor.setChecked(bool(option.default))
            editor.toggled.connect(self.changed)
        elif option.kind == "choice":
            editor = QComboBox()
            editor.addItems(list(option.choices))
            editor.setCurrentText(str(option.default))
            editor.currentTextChanged.connect(self.changed)
        elif option.kind == "int":
            editor = QSpinBox()
            editor.setRange(int(option.minimum or 0), 1 << 30)
            editor.setValue(int(option.default))
            editor.valueChanged.connect(self.changed)
        elif option.kind == "path":
            editor = PathEdit(folder=True)
        else:
            editor = QLineEdit(",".join(option.default) if option.kind == "list" else f"{option.default:g}"
                               if option.kind == "float" else str(option.default))
            if option.kind == "list" and option.choices:
                editor.setPlaceholderText(", ".join(option.choices))
            editor.textChanged.connect(self.changed)
        return editor

    def values(self) -> dict:
        """The options as the job takes them (it checks them and names what is wrong)."""
        values = {}
        for name, (option, editor) in self.editors.items():
            if isinstance(editor, QCheckBox):
                values[name] = editor.isChecked()
            elif isinstance(editor, QComboBox):
                values[name] = editor.currentText()
            elif isinstance(editor, QSpinBox):
                values[name] = editor.value()
            else:
                values[name] = editor.text().strip()
        return values

    def set_value(self, name: str, value) -> None:
        option, editor = self.editors[name]
        if isinstance(editor, QSpinBox):
            editor.setValue(int(value))
        elif isinstance(editor, QCheckBox):
            editor.setChecked(bool(value))
        elif isinstance(editor, QComboBox):
            editor.setCurrentText(str(value))
        else:
            editor.setText(str(value))


class PathEdit(QWidget):
    """A line edit with a Browse… button, for a file or a folder."""

    def __init__(self, folder: bool = False, save: bool = False, filter_text: str = "", parent=None):
        super().__init__(parent)
        self.folder, self.save, self.filter_text = folder, save, filter_text
        self.edit = QLineEdit()
        self.edit.textChanged.connect(self.edit.setToolTip)     # a long path shows whole on hover
        button = QPushButton("Browse…")
        button.clicked.connect(self.browse)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(button)

    def text(self) -> str:
        return self.edit.text()

    def setText(self, text: str) -> None:  # noqa: N802  (Qt's naming)
        self.edit.setText(text)

    def browse(self) -> None:
        if self.folder:
            path = QFileDialog.getExistingDirectory(self, "Choose a folder", self.text())
        elif self.save:
            path, _ = QFileDialog.getSaveFileName(self, "Save the variant as", self.text(), self.filter_text)
        else:
            path, _ = QFileDialog.getOpenFileName(self, "Choose a file", self.text(), self.filter_text)
        if path:
            self.setText(path)
