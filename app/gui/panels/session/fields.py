"""The Session tab's widgets, made from the one table of session settings
(app.core.session.fields): each row's widget kind, range or choices, label and help (the
tooltip). FormBinding makes the widgets and keeps them and the state in step, both ways."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox

from app.core.jobs.errors import UserError
from app.core.session.fields import BIG, SESSION_FIELDS, SessionField
from app.gui.panels.session.forms import KeyValueEdit, ProviderEditor

#: the boxes of the tab: key -> (title, tip)
GROUPS = {
    "providers": ("Execution providers (in priority order)", ""),
    "graph": ("Graph and memory", ""),
    "threads": ("Threads", ""),
    "advanced": ("Free dimensions and other settings", ""),
    "inputs": ("Inputs", "What every job feeds the model: a size for each dimension the model leaves open, and "
                         "seeded random values of the right type (integer inputs below the vocabulary size, masks "
                         "all ones), zeros, or your own .npy/.npz files."),
}
#: the fields that have a widget each (the Inputs table, inputs_table.py, edits the rest, a row per model input)
FIELDS: list[SessionField] = [row for row in SESSION_FIELDS if row.widget != "table"]
TABLE_FIELDS = frozenset(row.name for row in SESSION_FIELDS if row.widget == "table")


def spin_range(field: SessionField) -> tuple[int, int]:
    """A number field's spin box range: from its "unset" value or minimum to its maximum."""
    low = field.unset_at if field.unset_at is not None else (field.minimum or 0)
    return low, min(field.maximum if field.maximum is not None else BIG, BIG)


def make_widget(field: SessionField):
    kind = field.widget
    if kind == "choice":
        widget = QComboBox()
        widget.addItems(list(field.words))
        signal = widget.currentIndexChanged
    elif kind == "number":
        widget = QSpinBox()
        widget.setRange(*spin_range(field))
        if field.special:
            widget.setSpecialValueText(field.special)
        signal = widget.valueChanged
    elif kind == "check":
        widget = QCheckBox(field.label)
        signal = widget.toggled
    elif kind == "text":
        widget = QLineEdit()
        widget.setPlaceholderText(field.placeholder)
        signal = widget.textChanged
    elif kind == "pairs":
        widget = KeyValueEdit(field.placeholder, field.label.lower())
        signal = widget.textChanged
    elif kind == "providers":
        widget = ProviderEditor()
        signal = widget.changed
    else:
        raise ValueError(f"unknown widget kind {kind!r}")
    widget.setToolTip(field.help)
    return widget, signal


def read_widget(field: SessionField, widget) -> Any:
    """The field's value as the widget shows it (UserError for text it cannot read)."""
    kind = field.widget
    if kind == "choice":
        return field.values[widget.currentIndex()]
    if kind == "number":
        value = widget.value()
        return None if field.unset_at is not None and value == field.unset_at else value
    if kind == "check":
        return widget.isChecked()
    if kind == "text":
        return widget.text().strip()
    if kind == "pairs":
        return widget.pairs(whole=field.whole)
    return widget.providers()


def write_widget(field: SessionField, widget, value: Any) -> None:
    kind = field.widget
    if kind == "choice":
        values = list(field.values)
        if value in values:
            widget.setCurrentIndex(values.index(value))
    elif kind == "number":
        widget.setValue(field.unset_at if value is None else value)
    elif kind == "check":
        widget.setChecked(bool(value))
    elif kind == "text":
        widget.setText(value)
    elif kind == "pairs":
        widget.set_pairs(value)
    else:
        widget.set_providers(value)


class FormBinding:
    """Widgets for `fields`, bound to `state`: a widget's change sets its field (once), and a
    change of the state redraws the widgets of the fields that changed. Neither direction
    echoes back: widgets written from the state do not write the state, and the widget the
    user is editing is not redrawn under the cursor."""

    def __init__(self, state, fields: list[SessionField] = FIELDS):
        self.state = state
        self.fields = {field.name: field for field in fields}
        self.widgets: dict[str, Any] = {}
        self._writing = False
        self._editing: str | None = None
        for field in fields:
            widget, signal = make_widget(field)
            self.widgets[field.name] = widget
            signal.connect(lambda *_args, name=field.name: self._widget_changed(name))
        self.write(set(self.fields))
        state.subscribe(self._state_changed)

    def close(self) -> None:
        self.state.unsubscribe(self._state_changed)

    def pull(self, name: str) -> None:
        """Set the field from its widget (e.g. after the form changed the widget's rows itself)."""
        self._widget_changed(name)

    def write(self, names) -> None:
        self._writing = True
        try:
            for name in names:
                if name in self.widgets and name != self._editing:
                    write_widget(self.fields[name], self.widgets[name], self.state.get(name))
        finally:
            self._writing = False

    def _widget_changed(self, name: str) -> None:
        if self._writing:
            return
        try:
            value = read_widget(self.fields[name], self.widgets[name])
        except UserError as exc:
            self.state.report_problem(name, exc.message)
            return
        self._editing = name
        try:
            self.state.set(**{name: value})
        finally:
            self._editing = None

    def _state_changed(self, _state, changed) -> None:
        self.write(changed)
