"""The Overview counts the model's cost again on the Session tab's inputs."""

from tests import models
from tests.core.graph.test_cost_shapes import bert, per_layer_hand_count


def test_the_overview_counts_on_the_session_tabs_inputs(qtbot, window, tmp_path):
    path = models.save(bert(1), tmp_path / "bert.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000) as opened:
        window.open_model(path)
    model = opened.args[0]
    assert model.summary["macs"] == per_layer_hand_count(128)
    overview = window.panel("Overview")
    overview.ensure_built()
    window.session.set(**{"inputs.dims": {"sequence": 32}})
    overview.recount()
    qtbot.waitUntil(lambda: model.summary["macs"] == per_layer_hand_count(32), timeout=60000)
    qtbot.waitUntil(lambda: "[1, 32]" in overview.fact_labels["Cost"].text(), timeout=10000)
    assert overview.recount_button.isEnabled()


def test_the_overview_counts_an_ort_file_from_its_graph(qtbot, window, tmp_path):
    from tests.core.graph.test_cost_ort import _ort

    _, ort_file = _ort(tmp_path, models.cnn(channels=16), "cnn")
    with qtbot.waitSignal(window.model_opened, timeout=60000) as opened:
        window.open_model(ort_file)
    assert opened.args[0].summary["macs"] > 0
    overview = window.panel("Overview")
    overview.ensure_built()
    qtbot.waitUntil(lambda: "MMACs" in overview.fact_labels["Cost"].text(), timeout=10000)
