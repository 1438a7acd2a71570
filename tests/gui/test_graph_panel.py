"""The Graph tab: the model drawn, search, the node panel, control-flow bodies, export."""

from __future__ import annotations

from PySide6.QtGui import QImage

from app.core.units import shape_text
from tests import models


def open_graph(qtbot, window, path, parent=None):
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        model = window.open_model(path, parent=parent, kind="variant" if parent else "source")
    panel = window.panel("Graph")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    qtbot.waitUntil(lambda: panel.picture is not None and panel.picture["path"] == model.path
                    and panel.details is not None, timeout=60000)
    return panel, model


def test_the_tab_draws_the_current_model(qtbot, window, tmp_path):
    panel, model = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    canvas = panel.view.canvas
    assert canvas.ids == ["in:x", "0", "1", "2", "3", "4", "5", "6", "out:y"]
    assert [n["name"] for n in canvas.nodes[1:3]] == ["conv1", "relu1"]
    assert panel.status.text().startswith("9 nodes drawn, 8 arrows")
    assert ("#c9dcf2", "Conv, MatMul, Gemm…") in panel.legend.entries
    assert window.last_error is None


def test_search_steps_through_the_matches_both_ways(qtbot, window, tmp_path):
    panel, _ = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    panel.search_box.setText("relu")
    assert panel.match_label.text() == "2 found"
    assert panel.view.canvas.marked == {panel.view.canvas.index["1"], panel.view.canvas.index["3"]}
    steps = []
    for step in (panel.next_match, panel.next_match, panel.next_match, panel.previous_match):
        step()
        steps.append(panel.selected)
    assert steps == ["1", "3", "1", "3"]
    assert panel.match_label.text() == "2 of 2"
    panel.search_box.setText("c2")                     # conv2 by name, relu2 by the tensor it reads
    panel.next_match()
    panel.next_match()
    assert panel.selected == "3"


def test_the_node_panel_shows_operator_attributes_shapes_weights_and_cost(qtbot, window, tmp_path):
    panel, _ = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    panel.select("0")
    text = panel.node_panel.text.toPlainText()
    for part in ("Conv", "Name: conv1", "Domain: ai.onnx", "pads", "[1, 1, 1, 1]",
                 f"x\nfloat\n{shape_text([1, 3, 32, 32])}", f"c1\nfloat\n{shape_text([1, 8, 32, 32])}",
                 "c1.w", f"float {shape_text([8, 3, 3, 3])}, 864 B", "c1.b", "min 0 · max 0 · mean 0",
                 "221.18 kMACs", "224 parameters"):
        assert part in text, part
    inputs = text.split("Inputs")[1].split("Outputs")[0]
    assert "x" in inputs and "c1.w" not in inputs, "weights are listed as initializers, not as inputs"
    assert panel.node_panel.toggle.isHidden()
    panel.select("in:x")
    assert "Graph input" in panel.node_panel.text.toPlainText()


def test_a_closed_if_opens_and_closes_again(qtbot, window, tmp_path):
    panel, _ = open_graph(qtbot, window, models.save(models.with_if_subgraph(), tmp_path / "if.onnx"))
    canvas = panel.view.canvas
    assert "3" in canvas.index and not any(i.startswith("3/") for i in canvas.ids), "bodies closed at first"
    assert "more inside closed bodies" in panel.status.text()
    panel.select("3")
    assert panel.node_panel.toggle.text() == "Open the bodies (2)"
    panel.node_panel.toggle.click()
    qtbot.waitUntil(lambda: "3/then_branch/0" in panel.view.canvas.index, timeout=60000)
    canvas = panel.view.canvas
    assert {"3/else_branch/0", "3/else_branch/1"} <= set(canvas.ids)
    assert len(canvas.frames) == 2 and panel.selected == "3"
    assert panel.node_panel.toggle.text() == "Close the bodies"
    panel.search_box.setText("else_abs")
    panel.next_match()
    assert panel.selected == "3/else_branch/1"
    panel.toggle("3")
    qtbot.waitUntil(lambda: "3/then_branch/0" not in panel.view.canvas.index, timeout=60000)
    assert panel.match_label.text() == "0 found (+1 in closed bodies)"


def test_export_writes_png_and_svg(qtbot, window, tmp_path):
    panel, _ = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    panel.extras.export("png", str(tmp_path / "graph.png"))
    panel.extras.export("svg", str(tmp_path / "graph.svg"))
    image = QImage(str(tmp_path / "graph.png"))
    rect = panel.view.canvas.boundingRect()
    assert image.width() == int(rect.width() * 2) and image.height() == int(rect.height() * 2)
    svg = (tmp_path / "graph.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "Gemm" in svg and "conv1" in svg
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".png", ".svg")) == ["graph.png", "graph.svg"]
    assert window.last_error is None
