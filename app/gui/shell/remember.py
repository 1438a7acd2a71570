"""A tab's remembered settings: the values of some of its editors as plain JSON, and back."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractButton, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox, QWidget


def widget_values(widgets: dict[str, QWidget]) -> dict:
    values = {}
    for name, widget in widgets.items():
        if isinstance(widget, QComboBox):
            data = widget.currentData()
            values[name] = data if isinstance(data, (str, int, float)) else widget.currentText()
        elif isinstance(widget, (QSpinBox, QDoubleSpinBox)):
            values[name] = widget.value()
        elif isinstance(widget, QAbstractButton):
            values[name] = widget.isChecked()
        elif isinstance(widget, QLineEdit):
            values[name] = widget.text()
    return values


def set_widget_values(widgets: dict[str, QWidget], values: dict) -> None:
    """Set what fits: a value of the wrong type, or a choice no longer offered, is left out."""
    for name, widget in widgets.items():
        value = values.get(name)
        if value is None:
            continue
        if isinstance(widget, QComboBox):
            index = widget.findData(value)
            index = index if index >= 0 else widget.findText(str(value))
            if index >= 0:
                widget.setCurrentIndex(index)
        elif isinstance(widget, QSpinBox) and isinstance(value, int) and not isinstance(value, bool):
            widget.setValue(value)
        elif isinstance(widget, QDoubleSpinBox) and isinstance(value, (int, float)) and not isinstance(value, bool):
            widget.setValue(float(value))
        elif isinstance(widget, QAbstractButton) and isinstance(value, bool):
            widget.setChecked(value)
        elif isinstance(widget, QLineEdit) and isinstance(value, str):
            widget.setText(value)
