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


def test_closing_the_dialog_cancels_its_host_key_scan_and_drops_its_answer(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QDialog

    from app.core.targets.jobs import SCAN_HOST_KEYS
    from app.gui.shell.targets_dialog import AddTargetDialog, TargetsDialog

    monkeypatch.setenv("ORTUNE_CONFIG_DIR", str(tmp_path))
    dialog = TargetsDialog(window.jobs, window)
    qtbot.addWidget(dialog)
    dialog.show()
    entered = AddTargetDialog(dialog)
    entered.name.setText("lab")
    entered.address.setText("me@192.0.2.1")           # a documentation address: nobody answers there
    monkeypatch.setattr(entered, "exec", lambda: QDialog.DialogCode.Accepted)
    dialog.add(dialog=entered)
    scan = window.jobs.jobs[-1]
    assert scan.entry is SCAN_HOST_KEYS and scan in window.jobs.running(), "the scan is a job of the window's"
    asking = dialog.status.text()
    assert asking.startswith("Asking lab (me@192.0.2.1) for its host key")
    dialog.close()
    assert scan.state == "cancelling", "closing the dialog stops its scan"
    qtbot.waitUntil(lambda: scan.ended_at is not None, timeout=30000)
    assert dialog.status.text() == asking, "what the scan sent after the dialog closed is dropped"
