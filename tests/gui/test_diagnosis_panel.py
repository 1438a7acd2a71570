from tests import models


def test_diagnose_panel_lists_findings_with_details(qtbot, window, tmp_path):
    path = models.save(models.shape_dependent(), tmp_path / "shape.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(path)
    panel = window.panel("Diagnose")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    assert panel.run_button.isEnabled()
    panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=120000)
    assert window.last_error is None
    found = {f["id"] for f in panel.result["findings"]}
    assert "symbolic-dims" in found
    assert len(panel.table.rows) == len(panel.result["findings"])
    row = next(i for i, f in enumerate(panel.result["findings"]) if f["id"] == "symbolic-dims")
    panel.table.selectRow(row)
    assert "Evidence" in panel.details.toHtml()
    assert panel.apply_button.isEnabled()
    panel.apply_selected()
    assert window.session.config().free_dimension_overrides == {"batch": 1}
