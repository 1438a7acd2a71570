"""The Targets dialog's Test and Remove act on the selected target: with none selected they are off."""

from PySide6.QtCore import Qt

from app.core.targets.store import Target, save_targets


def test_test_and_remove_wait_for_a_selected_target(qtbot, window, tmp_path, monkeypatch):
    from app.gui.shell.targets_dialog import TargetsDialog

    monkeypatch.setenv("ORTUNE_CONFIG_DIR", str(tmp_path))
    save_targets({"box": Target(name="box", host="box.example"), "rig": Target(name="rig", host="rig.example")})
    dialog = TargetsDialog(window.jobs, window)
    qtbot.addWidget(dialog)
    test, remove = dialog.buttons["Test"], dialog.buttons["Remove"]
    assert not test.isEnabled() and not remove.isEnabled(), "nothing is selected yet"
    assert "Select a target" in test.toolTip()
    dialog.table.selectRow(1)
    assert test.isEnabled() and remove.isEnabled()
    dialog.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    dialog.table.selectRow(0)
    assert dialog.selected().name == "rig", "the row shown, whatever the sort"
    dialog.table.clearSelection()
    assert not test.isEnabled() and not remove.isEnabled()
    dialog.table.selectRow(0)
    dialog.remove()
    assert list(dialog.targets) == ["box"]
    assert not test.isEnabled() and not remove.isEnabled(), "the removed target's row is gone with its selection"
