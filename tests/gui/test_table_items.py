"""The shared results table: what it leaves behind between two fillings."""

import gc

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QStandardItem

from app.gui.widgets.table import DataTable


def test_a_table_leaves_no_python_wrapper_of_its_items_behind(qtbot):
    # a wrapper the model's wrapper kept outlived the item clear() deleted, and PySide handed it
    # back for a QHeaderView later made at the same address ("'QStandardItem' object has no
    # attribute 'setSectionResizeMode'", once in CI)
    table = DataTable(["name", "value"])
    qtbot.addWidget(table)
    table.set_rows([["a", 1.5], ["b", 2.0]])
    table.set_rows([["c", 3.0]])
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, QStandardItem)]
    assert table.cell(0, 1) == "3.00" and table.cell(0, 0, Qt.ItemDataRole.ToolTipRole) == "c"


def test_styling_a_cell_leaves_no_python_wrapper_of_its_item_behind(qtbot):
    # the Convert card, Tune and Drift styled cells through source.item(): each left a wrapper that
    # outlived the next set_rows, and one CI run got a QMenu's new QAction back as a 'QStandardItem'
    table = DataTable(["name", "value"])
    qtbot.addWidget(table)
    table.set_rows([["a", 1.5], ["b", 2.0]])
    table.set_cell(0, 1, Qt.ItemDataRole.ForegroundRole, QBrush(QColor("red")))
    table.set_header_tip(1, "tip")
    assert table.cell(0, 1, Qt.ItemDataRole.ForegroundRole).color() == QColor("red")
    table.set_rows([["c", 3.0]])
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, QStandardItem)]
    assert table.cell(0, 1, Qt.ItemDataRole.ForegroundRole) is None, "a new filling starts unstyled"
