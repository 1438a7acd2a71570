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
    assert panel.caption.current and "shape.onnx</b> · x 1×16 · " in panel.caption.text()
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(models.save(models.tiny_add(), tmp_path / "other.onnx"))
    assert panel.caption.state == "previous" and "previous model: <b>shape.onnx" in panel.caption.text()
    assert not panel.table.isEnabled(), "another model's findings are greyed"
    assert "Latency p50" in panel.figures.text() and not panel.figures.isEnabled(), "and so is its latency"
