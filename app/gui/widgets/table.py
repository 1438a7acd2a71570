"""A table that sorts, filters, copies and exports CSV: every table of the window is one."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any, Callable, Sequence

from PySide6.QtCore import QEvent, QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QFileDialog, QHeaderView, QMenu, QTableView, QWidget

from app.core.tables import rows_to_csv
from app.core.formatting import shared_decimals
from app.gui.widgets.plain_text import plain

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
MAX_COLUMN_PX = 280       # a column with long text (a file name) stops here; the whole text is in its tooltip
MIN_COLUMN_PX = 90        # the least a column is narrowed to, to keep a key column in view


class DataTable(QTableView):
    """A sortable, filterable table of plain rows. Ctrl+C copies the selection as TSV;
    the context menu copies everything or exports CSV."""

    def __init__(self, headers: Sequence[str] = (), parent: QWidget | None = None):
        super().__init__(parent)
        self.source = QStandardItemModel(0, len(headers), self)
        self.source.setHorizontalHeaderLabels(list(headers))
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.source)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)
        self.setModel(self.proxy)
        self.setSortingEnabled(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)     # a long file name keeps its end: "…cls_int8.onnx"
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        copy = QAction("Copy", self, shortcut=QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selection)
        self.addAction(copy)
        self.headers = list(headers)
        self.rows: list[list[Any]] = []
        self.decimals = 2            # the most a column of fractions gets (see set_rows)
        self._column_decimals: list[int] = []
        self._column: int | None = None
        self.fixed_decimals: dict[str, int] = {}   # header -> decimals, for columns that must not vary
        #: header -> the app.core.formatting function that writes its numbers (a ratio as ×0.60 …), so a
        #: figure reads in a table as it does in the sentences of every tab
        self.column_formats: dict[str, Callable[[float], str]] = {}
        self.key_columns: tuple[str, ...] = ()     # headers kept in view (see _keep_key_columns)
        self._natural_widths: list[int] = []
        self.sortByColumn(-1, Qt.SortOrder.AscendingOrder)   # insertion order until a header is clicked

    def set_rows(self, rows: Sequence[Sequence[Any]], headers: Sequence[str] | None = None) -> None:
        if headers is not None:
            self.headers = list(headers)
        self.rows = [list(r) for r in rows]
        # one format per column: as many decimals as its smallest figure needs (3 significant
        # digits), the same for every row, so 944.7470 and 2,767.2 never share a column
        self._column_decimals = [shared_decimals([v for v in column if isinstance(v, float)], most=self.decimals)
                                 for column in zip_longest(*self.rows)]
        for index, header in enumerate(self.headers[:len(self._column_decimals)]):
            if header in self.fixed_decimals:
                self._column_decimals[index] = self.fixed_decimals[header]
        self.setSortingEnabled(False)
        self.source.clear()
        self.source.setColumnCount(len(self.headers))
        self.source.setHorizontalHeaderLabels(self.headers)
        self.source.setRowCount(len(self.rows))
        # the model makes its items itself: a QStandardItem made here gets a Python wrapper the
        # model's wrapper keeps, which outlives the item clear() deletes, and PySide handed that
        # stale wrapper back for a QHeaderView later made at the same address (one CI run:
        # "'QStandardItem' object has no attribute 'setSectionResizeMode'")
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for index, row in enumerate(self.rows):
            for column, value in enumerate(row):
                self._column = column          # format() reads it: a subclass may override format(value)
                text, number = self.format(value), isinstance(value, (int, float))
                roles = {Qt.ItemDataRole.DisplayRole: text,
                         SORT_ROLE: value if number and not isinstance(value, bool) else text}
                if isinstance(value, str):
                    roles[Qt.ItemDataRole.ToolTipRole] = plain(value)
                if number:
                    roles[Qt.ItemDataRole.TextAlignmentRole] = int(right.value)
                self.source.setItemData(self.source.index(index, column), roles)
        self._column = None
        self.setSortingEnabled(True)
        self.resizeColumnsToContents()
        # with a key column kept in view: what each column's text needs, not a stretched last
        # column's width at a larger size (it would stay past the view's edge once the window shrinks)
        header = self.horizontalHeader()
        self._natural_widths = [min(max(self.sizeHintForColumn(c), header.sectionSizeHint(c)) if self.key_columns
                                    else self.columnWidth(c), MAX_COLUMN_PX) for c in range(self.source.columnCount())]
        self._keep_key_columns()

    def resizeEvent(self, event) -> None:  # noqa: N802  (Qt's naming)
        super().resizeEvent(event)
        if self.key_columns:           # otherwise the widths a user dragged stay as they are
            self._keep_key_columns()

    def viewportEvent(self, event) -> bool:  # noqa: N802
        # the view narrows without the table resizing when its vertical scroll bar appears
        if event.type() == QEvent.Type.Resize and self.key_columns:
            self._keep_key_columns()
        return super().viewportEvent(event)

    def _keep_key_columns(self) -> None:
        """Columns at their natural width (at most MAX_COLUMN_PX), but where a key column (a
        verdict) would be cut off by the view's right edge, the widest columns before it give up
        width, down to MIN_COLUMN_PX each; their text is elided, whole in the tooltip."""
        widths = list(self._natural_widths)
        keys = [self.headers.index(h) for h in self.key_columns if h in self.headers[:len(widths)]]
        if keys:
            last = max(keys)
            excess = sum(widths[:last + 1]) - self.viewport().width()
            for column in sorted((c for c in range(last) if c not in keys), key=lambda c: -widths[c]):
                if excess <= 0:
                    break
                cut = max(0, min(excess, widths[column] - MIN_COLUMN_PX))
                widths[column] -= cut
                excess -= cut
        for column, width in enumerate(widths):
            self.setColumnWidth(column, width)

    # a cell is styled and read through the model's indexes, never through source.item(): an item
    # fetched that way gets a Python wrapper the model's wrapper keeps after the next set_rows
    # deletes the item, and PySide can hand that stale wrapper back for another object later made
    # at the same address (one CI run: a QMenu's new QAction came back as a 'QStandardItem')
    def set_cell(self, row: int, column: int, role: Qt.ItemDataRole, value: Any) -> None:
        """One role of a cell (ForegroundRole, BackgroundRole, FontRole …), by its row in set_rows."""
        self.source.setData(self.source.index(row, column), value, role)

    def cell(self, row: int, column: int, role: Qt.ItemDataRole = Qt.ItemDataRole.DisplayRole) -> Any:
        """One role of a cell, by its row in set_rows (None where it was never set)."""
        return self.source.data(self.source.index(row, column), role)

    def set_header_tip(self, column: int, text: str) -> None:
        self.source.setHeaderData(column, Qt.Orientation.Horizontal, text, Qt.ItemDataRole.ToolTipRole)

    def keep_rows(self, rows: int) -> None:
        """Never less tall than its header and `rows` rows: a small window scrolls the tab
        instead of leaving one row of a table in view."""
        frame = 2 * self.frameWidth() + self.horizontalScrollBar().sizeHint().height()
        self.setMinimumHeight(self.horizontalHeader().sizeHint().height() + frame
                              + rows * self.verticalHeader().defaultSectionSize())

    def format(self, value: Any) -> str:
        """A cell's text; a fraction takes its column's decimals while set_rows fills the table."""
        if isinstance(value, bool) or value is None:
            return "" if value is None else ("yes" if value else "no")
        column = self._column
        header = self.headers[column] if column is not None and column < len(self.headers) else None
        if isinstance(value, (int, float)) and header in self.column_formats and value == value:
            return self.column_formats[header](value)
        if isinstance(value, int):
            return f"{value:,}"
        if isinstance(value, float):
            if value != value:
                return "–"
            decimals = self._column_decimals[column] if column is not None and column < len(
                self._column_decimals) else self.decimals
            return f"{value:,.{decimals}f}"
        return str(value)

    def current_row(self) -> int | None:
        """The row under the cursor, as an index into the rows given (whatever the sort)."""
        index = self.currentIndex()
        return self.proxy.mapToSource(index).row() if index.isValid() else None

    def set_filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)

    def visible_rows(self) -> list[list[Any]]:
        """The rows in their current sort order and filter, with their raw values."""
        rows = []
        for r in range(self.proxy.rowCount()):
            rows.append([self.proxy.index(r, c).data(SORT_ROLE) for c in range(self.proxy.columnCount())])
        return rows

    def copy_selection(self) -> None:
        indexes = sorted(self.selectionModel().selectedIndexes(), key=lambda i: (i.row(), i.column()))
        lines: dict[int, list[str]] = {}
        for index in indexes:
            lines.setdefault(index.row(), []).append(str(index.data()))
        QGuiApplication.clipboard().setText("\n".join("\t".join(v) for v in lines.values()))

    def copy_all(self) -> None:
        QGuiApplication.clipboard().setText(rows_to_csv(self.headers, self.visible_rows()).replace(",", "\t"))

    def export_csv(self, path: str | None = None) -> str | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export table as CSV", "table.csv", "CSV files (*.csv)")
        if not path:
            return None
        with open(path, "w", newline="", encoding="utf-8") as handle:
            handle.write(rows_to_csv(self.headers, self.visible_rows()))
        return path

    def _menu(self, position) -> None:
        menu = QMenu(self)
        menu.addAction("Copy selection", self.copy_selection)
        menu.addAction("Copy whole table", self.copy_all)
        menu.addAction("Export CSV…", self.export_csv)
        menu.exec(self.viewport().mapToGlobal(position))
