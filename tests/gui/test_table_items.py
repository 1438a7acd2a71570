"""The shared results table: what it leaves behind between two fillings."""

import gc

from PySide6.QtGui import QStandardItem

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
    assert table.source.item(0, 1).text() == "3.00" and table.source.item(0, 0).toolTip() == "c"
