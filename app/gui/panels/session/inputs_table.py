"""The Session tab's inputs: a row per model input with a cell per dimension, where its
values come from, and what the last plan (a run or the probe) chose for it and why.

Bound to the SessionState directly (it edits three fields at once): a named dimension's
cell sets `inputs.dims[label]`, shared by every input that has it; an input with an
unnamed dimension gets its whole shape in `inputs.shapes[input]`; a file sets
`inputs.files[input]`. A cell nobody set shows what the plan would choose, in italics."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QFileDialog, QHeaderView, QLineEdit, QMenu, QSpinBox,
                               QTableWidget, QTableWidgetItem, QToolButton)

from app.core.session.input_plan import dim_label, known_shape
from app.core.formatting import shape_text
from app.gui.widgets.plain_text import plain

#: the declared shape is the dimension cells themselves: a named one says its name, an unnamed one "?",
#: a fixed one its number in grey (and the input's tooltip spells it out)
FIXED_COLUMNS = ["Input", "Type"]
TAIL_COLUMNS = ["Values", "Source"]
MAX_DIM = 1 << 30
GUESSED_COLOR = QColor("#c0392b")
ALL_FILES = "*"
MIN_ROWS, MAX_ROWS = 2, 12
SPIN_BUTTONS = 30             # the up/down arrows and the cell's margins, in pixels
NAME_CHARS = 12               # a dimension's name in its cell, at most


def named(label: str, dim) -> bool:
    return isinstance(dim, str) and dim == label


def short_names(names: list[str]) -> dict[str, str]:
    """Each dimension name short enough for its cell (the whole one is in the cell's tooltip):
    exporters' names such as p2o.DynamicDimension.0 would push the Source column out of view.
    A long start that all of them share is left out (…0, …1), else a long name keeps its end."""
    names = list(dict.fromkeys(names))
    shared = os.path.commonprefix(names) if len(names) > 1 else ""
    if len(shared) >= 6 and all(len(name) > len(shared) for name in names):
        return {name: "…" + name[len(shared):] for name in names}
    return {name: name if len(name) <= NAME_CHARS else "…" + name[-(NAME_CHARS - 1):] for name in names}


class InputsTable(QTableWidget):
    edited = Signal()                 # the user changed a size or a file (after the state was set)

    def __init__(self, state):
        super().__init__(0, len(FIXED_COLUMNS) + len(TAIL_COLUMNS))
        self.state = state
        self.inputs: list[dict] = []          # {name, dtype, shape} as the model declares them
        self.plan: dict[str, dict] = {}       # input name -> the last plan's row for the current model
        self.metadata: dict = {}              # the model's, for the sizes the plan would choose
        self.short_names: dict[str, str] = {}  # a dimension's name -> as its cells show it
        self.audio = False
        self.rank = 0
        self._writing = False
        self.spins: dict[tuple[str, int], QSpinBox] = {}
        self.shape_edits: dict[str, QLineEdit] = {}
        self.value_buttons: dict[str, QToolButton] = {}
        self.choose_file = self._ask_for_file
        self.choose_value = self._ask_for_value
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setWordWrap(False)
        self._set_headers()
        state.subscribe(self._state_changed)

    def close_binding(self) -> None:
        self.state.unsubscribe(self._state_changed)

    # the model -----------------------------------------------------------------------------
    def set_inputs(self, inputs: list[dict], metadata: dict | None = None) -> None:
        """The current model's inputs and metadata (its summary's); forgets the previous model's plan."""
        from app.core.session.input_plan import looks_like_audio

        self.inputs = [dict(i) for i in inputs]
        self.metadata, self.audio = dict(metadata or {}), looks_like_audio(self.inputs)
        self.short_names = short_names([d for i in self.inputs for d in i.get("shape") or []
                                        if isinstance(d, str) and d not in ("", "?")])
        self.plan = {}
        self.rank = max([len(i["shape"]) for i in self.inputs if i.get("shape") is not None] + [1])
        self._rebuild()

    def set_plan(self, rows: list[dict]) -> None:
        """What a run or the probe chose for each input: the source column and the unset cells."""
        self.plan = {row["name"]: row for row in rows}
        self._redraw()

    def guessed(self) -> list[str]:
        return [name for name, row in self.plan.items() if row.get("source") == "default"]

    # building ------------------------------------------------------------------------------
    def _set_headers(self) -> None:
        dims = [f"dim {i}" for i in range(self.rank)]
        self.setColumnCount(len(FIXED_COLUMNS) + self.rank + len(TAIL_COLUMNS))
        self.setHorizontalHeaderLabels(FIXED_COLUMNS + dims + TAIL_COLUMNS)
        self.horizontalHeaderItem(self.columnCount() - 1).setToolTip(
            "Where the last plan (a run in any tab, or Find working inputs) got each input's shape, and why")
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # The reasons get what is left (elided, whole in the tooltip): never a table scrolled sideways.
        header.setSectionResizeMode(self.columnCount() - 1, QHeaderView.ResizeMode.Stretch)

    def _column(self, tail: str) -> int:
        return len(FIXED_COLUMNS) + self.rank + TAIL_COLUMNS.index(tail)

    def _rebuild(self) -> None:
        self.spins, self.shape_edits, self.value_buttons = {}, {}, {}
        self.clearContents()
        self._set_headers()
        self.setRowCount(len(self.inputs))
        for row, item in enumerate(self.inputs):
            name, shape = item["name"], item.get("shape")
            for column, text in enumerate((name, item["dtype"])):
                cell = QTableWidgetItem(text)
                cell.setToolTip(plain(f"{name}: {item['dtype']}, declared {shape_text(shape)}"))
                self.setItem(row, column, cell)
            if shape is None:
                self._add_shape_edit(row, name)
            else:
                for index, dim in enumerate(shape):
                    self._add_dim(row, name, index, dim)
            self._add_values_button(row, name)
            self.setItem(row, self._column("Source"), QTableWidgetItem())
        self._redraw()

    def _add_dim(self, row: int, name: str, index: int, dim) -> None:
        column = len(FIXED_COLUMNS) + index
        label = dim_label(name, index, dim)
        if label is None:
            cell = QTableWidgetItem(str(dim))
            cell.setToolTip("fixed by the model")
            cell.setForeground(QBrush(self.palette().placeholderText().color()))
            cell.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            self.setItem(row, column, cell)
            return
        spin = QSpinBox()
        spin.setRange(0, MAX_DIM)
        spin.setPrefix(f"{self.short_names[dim] if named(label, dim) else '?'}: ")
        spin.setFrame(False)
        spin.valueChanged.connect(lambda value, n=name, i=index: self._dim_edited(n, i, value))
        self.spins[(name, index)] = spin
        self.setCellWidget(row, column, spin)

    def _add_shape_edit(self, row: int, name: str) -> None:
        edit = QLineEdit()
        edit.setPlaceholderText("D1,D2,… (no shape declared)")
        edit.setFrame(False)
        edit.editingFinished.connect(lambda n=name: self._shape_typed(n))
        self.shape_edits[name] = edit
        self.setCellWidget(row, len(FIXED_COLUMNS), edit)

    def _add_values_button(self, row: int, name: str) -> None:
        button = QToolButton()
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        button.setAutoRaise(True)
        menu = QMenu(button)
        menu.addAction("Generated (the Values setting above)", lambda n=name: self.clear_file(n))
        menu.addAction("From a .npy file…", lambda n=name: self._pick_file(n))
        menu.addAction("One value for every element…", lambda n=name: self._pick_value(n))
        button.setMenu(menu)
        self.value_buttons[name] = button
        self.setCellWidget(row, self._column("Values"), button)

    # drawing from the state ----------------------------------------------------------------
    def _state_changed(self, _state, changed) -> None:
        if changed & {"inputs.dims", "inputs.shapes", "inputs.files", "inputs.values", "inputs.mode"}:
            self._redraw()

    def _redraw(self) -> None:
        if self._writing:
            return
        self._writing = True
        try:
            dims, shapes = self.state.get("inputs.dims"), self.state.get("inputs.shapes")
            files, mode = self.state.get("inputs.files"), self.state.get("inputs.mode")
            for row, item in enumerate(self.inputs):
                self._draw_row(row, item, dims, shapes, files, mode)
        finally:
            self._writing = False
        self.resizeColumnsToContents()
        self._narrow_dim_columns()
        self._fit_height()

    def _narrow_dim_columns(self) -> None:
        """A size cell as wide as its name and five digits, not as the largest value it takes."""
        metrics = self.fontMetrics()
        for index in range(self.rank):
            spins = [spin for (_, i), spin in self.spins.items() if i == index]
            if spins:
                width = max(metrics.horizontalAdvance(spin.prefix() + "00000") for spin in spins)
                self.setColumnWidth(len(FIXED_COLUMNS) + index, width + SPIN_BUTTONS)

    def _fit_height(self) -> None:
        """As tall as its rows (a few at least, a dozen at most, then it scrolls)."""
        rows = min(max(self.rowCount(), MIN_ROWS), MAX_ROWS)
        height = self.horizontalHeader().height() + 2 * self.frameWidth()
        height += sum(self.rowHeight(r) for r in range(min(rows, self.rowCount())))
        height += max(0, rows - self.rowCount()) * self.verticalHeader().defaultSectionSize()
        if self.horizontalScrollBar().isVisible():
            height += self.horizontalScrollBar().height()
        self.setFixedHeight(height)

    def _draw_row(self, row: int, item: dict, dims: dict, shapes: dict, files: dict, mode: str) -> None:
        name, declared = item["name"], item.get("shape")
        if declared is None and name in self.shape_edits:
            self.shape_edits[name].setText(",".join(str(d) for d in shapes.get(name, [])))
        planned = self.plan.get(name, {}).get("shape")
        shown = known_shape(item, dims, shapes, planned, self.metadata, self.audio) if declared else []
        for index, (value, origin) in enumerate(shown):
            spin = self.spins.get((name, index))
            if spin is None:
                continue
            label, mine = dim_label(name, index, declared[index]), origin == "yours"
            spin.setValue(int(value))
            font = spin.font()
            font.setItalic(not mine)
            spin.setFont(font)
            spin.setToolTip(plain(f"{label}: your value" if mine else
                                  f"{label}: not set; the plan chooses (shown: what it chose or would choose)"))
        file = files.get(name) or files.get(ALL_FILES)
        value = self.state.get("inputs.values").get(name)
        button = self.value_buttons[name]
        generated = "zeros" if mode == "zeros" else "random"      # an input without a file in "files" mode
        if value is not None:
            button.setText(f"= {value:g} ▾")
            button.setToolTip(f"every element is {value:g}")
        else:
            button.setText(f"{file.rsplit('/', 1)[-1]} ▾" if file else f"{generated} ▾")
            button.setToolTip(plain(file or "seeded random values or zeros, as the Values setting above says"))
        self._draw_source(row, name)

    def _draw_source(self, row: int, name: str) -> None:
        cell = self.item(row, self._column("Source"))
        plan = self.plan.get(name)
        if plan is None:
            cell.setText("not planned yet: run a job or find working inputs")
            cell.setForeground(QBrush(self.palette().placeholderText().color()))
            cell.setToolTip("")
            return
        source, reason = plan["source"], plan["reason"]
        text = reason if reason.startswith(f"{source}:") else f"{source}: {reason}"     # not "probed: probed: 18"
        guessed = source == "default"
        cell.setText(("⚠ " if guessed else "") + text)
        cell.setToolTip(plain(f"{text}\nvalues: {plan.get('values', '')}\nshape run: {shape_text(plan.get('shape'))}"))
        cell.setForeground(QBrush(GUESSED_COLOR if guessed else self.palette().text().color()))

    # edits to the state --------------------------------------------------------------------
    def row_shape(self, name: str) -> list[int]:
        """The shape the row shows: fixed dims and the cells' values."""
        item = next(i for i in self.inputs if i["name"] == name)
        return [dim if dim_label(name, index, dim) is None else self.spins[(name, index)].value()
                for index, dim in enumerate(item.get("shape") or [])]

    def _set_state(self, **values) -> None:
        self._writing = True
        try:
            self.state.set(**values)
        finally:
            self._writing = False
        self._redraw()
        self.edited.emit()

    def _dim_edited(self, name: str, index: int, value: int) -> None:
        if self._writing:
            return
        item = next(i for i in self.inputs if i["name"] == name)
        dim = item["shape"][index]
        label = dim_label(name, index, dim)
        shapes = self.state.get("inputs.shapes")
        if not named(label, dim) or name in shapes:
            shapes[name] = self.row_shape(name)
        if not named(label, dim):
            self._set_state(**{"inputs.shapes": shapes})
            return
        dims = self.state.get("inputs.dims")
        dims[label] = value
        for other in self.inputs:                 # whole shapes that hold the same named dim follow it
            for position, other_dim in enumerate(other.get("shape") or []):
                if other_dim == dim and other["name"] in shapes:
                    shapes[other["name"]][position] = value
        self._set_state(**{"inputs.dims": dims, "inputs.shapes": shapes})

    def _shape_typed(self, name: str) -> None:
        text = self.shape_edits[name].text().strip()
        shapes = self.state.get("inputs.shapes")
        try:
            shape = [int(part) for part in text.replace("×", ",").split(",") if part.strip()]
        except ValueError:
            self.state.report_problem("inputs.shapes", f"Session › inputs: the shape of {name} must be whole "
                                                       f"numbers separated by commas, not {text!r}")
            return
        if shape:
            shapes[name] = shape
        else:
            shapes.pop(name, None)
        self._set_state(**{"inputs.shapes": shapes})

    def set_file(self, name: str, path: str) -> None:
        files = self.state.get("inputs.files")
        files[name] = path
        self._set_state(**{"inputs.files": files})

    def clear_file(self, name: str) -> None:
        """Back to generated values: no file and no value of the user's for this input."""
        files, values = self.state.get("inputs.files"), self.state.get("inputs.values")
        if files.pop(name, None) is not None or values.pop(name, None) is not None:
            self._set_state(**{"inputs.files": files, "inputs.values": values})

    def set_value(self, name: str, value: float) -> None:
        files, values = self.state.get("inputs.files"), self.state.get("inputs.values")
        files.pop(name, None)
        values[name] = value
        self._set_state(**{"inputs.files": files, "inputs.values": values})

    def _pick_value(self, name: str) -> None:
        value = self.choose_value(name)
        if value is not None:
            self.set_value(name, value)

    def _ask_for_value(self, name: str) -> float | None:
        from PySide6.QtWidgets import QInputDialog

        value, ok = QInputDialog.getDouble(self, f"Value of {name}", f"Every element of {name}:",
                                           self.state.get("inputs.values").get(name, 0.0), -1e300, 1e300, 6)
        return value if ok else None

    def fill(self, dims: dict[str, int], rows: list[dict]) -> None:
        """Keep the sizes the probe found in `inputs.probed`, named dims by their name and
        unnamed ones by their label ("x[2]"), still marked as found rather than given: a later
        result says they were probed, never that they are the user's."""
        probed, shapes = self.state.get("inputs.probed"), self.state.get("inputs.shapes")
        given = self.state.get("inputs.dims")
        labels = {dim_label(item["name"], index, dim) for item in self.inputs if item["name"] not in shapes
                  for index, dim in enumerate(item.get("shape") or [])} - {None}
        probed.update({label: value for label, value in dims.items() if label in labels and label not in given})
        self.set_plan(rows)
        self._set_state(**{"inputs.probed": probed})

    def _pick_file(self, name: str) -> None:
        path = self.choose_file(name)
        if path:
            self.set_file(name, path)

    def _ask_for_file(self, name: str) -> str:
        path, _ = QFileDialog.getOpenFileName(self, f"Values for {name}", "", "NumPy arrays (*.npy)")
        return path
