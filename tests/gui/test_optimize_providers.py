"""The Optimize tab lists the execution provider candidates beside the conversions, and a
search of OpenVINO alone fills its row (skipped with the reason where the plugin cannot load)."""

from PySide6.QtCore import Qt

from app.core.optimize.candidates import ALL_KINDS
from app.core.session.config import SessionConfig
from tests import models
from tests.gui.steps import open_and_wait, tab
from tests.openvino_plugin import openvino_plugin  # noqa: F401 (a fixture)


def _only(panel, kinds):
    for index in range(panel.kinds.count()):
        item = panel.kinds.item(index)
        if item.data(Qt.ItemDataRole.UserRole) not in kinds:
            item.setCheckState(Qt.CheckState.Unchecked)


def test_the_kinds_list_shows_the_provider_candidates(qtbot, window):
    panel = tab(window, "Optimize")
    listed = [panel.kinds.item(i).data(Qt.ItemDataRole.UserRole) for i in range(panel.kinds.count())]
    assert listed == list(ALL_KINDS) and "openvino" in listed and "openvino-fp32" in listed
    titles = {panel.kinds.item(i).data(Qt.ItemDataRole.UserRole): panel.kinds.item(i).text()
              for i in range(panel.kinds.count())}
    assert titles["openvino-fp32"] == "OpenVINO (FP32)" and titles["openvino"] == "OpenVINO (its default precision)"
    assert "float16 policy" in panel.kinds.item(listed.index("openvino")).toolTip()
    _only(panel, ("openvino-fp32", "ort"))
    assert panel.chosen_kinds() == ["ort", "openvino-fp32"]


def test_a_search_of_openvino_fills_its_row(qtbot, window, tmp_path, openvino_plugin):
    path = models.save(models.cnn(channels=8, size=32), tmp_path / "cnn.onnx")
    open_and_wait(qtbot, window, path)
    window.session.update(SessionConfig(intra_op_num_threads=1))
    panel = tab(window, "Optimize")
    _only(panel, ("openvino-fp32",))
    panel.budget.setValue(20)
    panel.screen_seconds.setValue(0.3)
    panel.tune.setChecked(False)
    panel.folder.setText(str(tmp_path / "ship"))
    panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=120000)
    assert window.last_error is None and panel.result is not None
    row = next(r for r in panel.table.rows if r[0] == "openvino-fp32")
    assert row[1] == "passed", row
    assert "Answer: " in panel.answer.text()
