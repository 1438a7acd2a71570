from PySide6.QtCore import Qt

from app.core.session.config import SessionConfig
from tests import models
from tests.gui.steps import open_and_wait, tab


def test_optimize_tab_fills_the_leaderboard_and_shows_the_answer(qtbot, window, tmp_path, monkeypatch):
    path = models.save(models.mlp(width=16, depth=1), tmp_path / "mlp.onnx")
    open_and_wait(qtbot, window, path)
    window.session.update(SessionConfig(intra_op_num_threads=1))
    panel = tab(window, "Optimize")
    for index in range(panel.kinds.count()):       # optimize and fp16 only: one made, one skipped
        item = panel.kinds.item(index)
        if item.data(Qt.ItemDataRole.UserRole) not in ("optimize", "fp16"):
            item.setCheckState(Qt.CheckState.Unchecked)
    assert panel.chosen_kinds() == ["optimize", "fp16"]
    assert not panel.params().try_expected_slower, "float16 on the CPU provider is skipped unless asked"
    panel.try_slower.setChecked(True)
    assert panel.params().try_expected_slower
    panel.try_slower.setChecked(False)
    panel.budget.setValue(20)
    panel.screen_seconds.setValue(0.3)
    panel.tune.setChecked(False)
    panel.folder.setText(str(tmp_path / "ship"))
    seen = []
    original = panel.table.set_rows
    monkeypatch.setattr(panel.table, "set_rows", lambda rows, *more: (seen.append(len(rows)), original(rows, *more)))
    assert panel.control.start_button.isEnabled()
    panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=120000)
    assert window.last_error is None and panel.result is not None
    assert 1 in seen and 2 in seen                          # the rows came one by one, as candidates finished
    kinds = [row[0] for row in panel.table.rows]
    assert kinds[:2] == ["source", "optimize"] and "fp16" in kinds
    assert "Answer: " in panel.answer.text() and str(tmp_path / "ship") in panel.answer.text()
    assert (tmp_path / "ship" / "report.html").exists()
    opened = []
    monkeypatch.setattr("PySide6.QtGui.QDesktopServices.openUrl", lambda url: opened.append(url.toLocalFile()))
    assert panel.ship_button.isEnabled()
    panel.ship_button.click()
    assert opened == [str(tmp_path / "ship")]
    # the search kept in the history opens again in the Optimize tab
    history = window.panel("History")
    window.tabs.setCurrentWidget(history)
    history.ensure_built()
    history.kind_filter.setCurrentText("optimize")
    history.refresh()
    history.table.selectRow(0)
    assert history.selected_id() == panel.result["history_id"]
    shown = panel.result
    panel.result = None
    panel.table.set_rows([])
    history.open_selected()
    assert window.tabs.currentWidget() is panel and panel.result["choice"] == shown["choice"]
    assert [row[0] for row in panel.table.rows][:2] == ["source", "optimize"]
    assert "Re-opened from History" in panel.answer.text()


def test_a_kept_candidate_opens_in_compare_beside_its_source_and_in_drift(qtbot, window, tmp_path):
    path = models.save(models.mlp(width=16, depth=1), tmp_path / "mlp.onnx")
    open_and_wait(qtbot, window, path)
    window.session.update(SessionConfig(intra_op_num_threads=1))
    panel = tab(window, "Optimize")
    for index in range(panel.kinds.count()):
        item = panel.kinds.item(index)
        if item.data(Qt.ItemDataRole.UserRole) != "optimize":
            item.setCheckState(Qt.CheckState.Unchecked)
    panel.budget.setValue(20)
    panel.screen_seconds.setValue(0.3)
    panel.tune.setChecked(False)
    panel.folder.setText(str(tmp_path / "ship"))
    assert panel.keep.isChecked()
    assert not panel.actions.buttons["Compare"].isEnabled()
    panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=120000)
    assert window.last_error is None
    kept = tmp_path / "ship" / "candidates" / "optimize.onnx"
    assert kept.exists()
    row = [r[0] for r in panel.table.rows].index("optimize")
    panel.table.setCurrentIndex(panel.table.proxy.index(row, 0))
    assert panel.actions.buttons["Compare"].isEnabled()
    panel.actions.buttons["Compare"].click()
    assert window.tabs.currentWidget() is window.panel("Compare")
    chosen = {m.path for m in window.model_list.selected()}
    assert chosen == {str(path.resolve()), str(kept.resolve())}
    assert window.current_model().kind == "optimize" and window.current_model().parent.path == str(path.resolve())
    window.tabs.setCurrentWidget(panel)
    panel.actions.buttons["Drift"].click()
    assert window.tabs.currentWidget() is window.panel("Drift")
