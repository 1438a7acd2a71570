"""The Graph tab: the model drawn, search, the node panel, control-flow bodies, export."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from app.core.formatting import shape_text
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
    assert panel.status.text().startswith("7 nodes drawn (+ 2 input and output boxes), 8 arrows")
    assert model.summary["node_count"] == 7, "the Overview's count"
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
    assert "3 more nodes inside closed bodies" in panel.status.text()
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


def test_export_writes_png_in_a_thread_of_its_own_and_svg(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtCore import QThread
    from app.gui.panels.graph import export

    panel, _ = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    painted_in = []
    original = export.export_png
    monkeypatch.setattr(export, "export_png", lambda *a: painted_in.append(QThread.currentThread()) or original(*a))
    panel.tools.export("png", str(tmp_path / "graph.png"))
    qtbot.waitUntil(lambda: panel.tools.png_export is None, timeout=60000)
    assert painted_in and painted_in[0] is not window.thread(), "painted outside the GUI thread"
    panel.tools.export("svg", str(tmp_path / "graph.svg"))
    image = QImage(str(tmp_path / "graph.png"))
    rect = panel.view.canvas.boundingRect()
    assert image.width() == int(rect.width() * 2) and image.height() == int(rect.height() * 2)
    assert image.pixelColor(image.width() // 2, image.height() // 2) != image.pixelColor(1, 1), "not blank"
    svg = (tmp_path / "graph.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "Gemm" in svg and "conv1" in svg
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".png", ".svg")) == ["graph.png", "graph.svg"]
    assert window.last_error is None


def test_the_save_dialog_starts_in_the_output_folder(qtbot, window, tmp_path, monkeypatch, own_output_folder):
    from PySide6.QtWidgets import QFileDialog

    panel, _ = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda _parent, _title, start, _filter: asked.append(start)
                        or ("", ""))
    panel.tools.export_dialog("png")
    assert asked == [str(own_output_folder / "cnn-graph.png")]


def wide(branches: int = 40):
    """The input read by `branches` parallel two-node branches joined by one Concat: wider
    than any window."""
    from onnx import TensorProto, helper

    nodes = []
    for i in range(branches):
        nodes += [helper.make_node("Relu", ["x"], [f"r{i}"], name=f"branch_relu_{i}"),
                  helper.make_node("Neg", [f"r{i}"], [f"n{i}"], name=f"branch_neg_{i}")]
    nodes.append(helper.make_node("Concat", [f"n{i}" for i in range(branches)], ["y"], name="join", axis=1))
    graph = helper.make_graph(nodes, "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4 * branches])])
    return models._model(graph)


@pytest.mark.parametrize("model", [wide, lambda: models.mlp(depth=60)], ids=["wide", "deep"])
def test_the_first_view_starts_at_the_input_with_labels_and_fit_is_no_thin_line(qtbot, window, tmp_path, model):
    from app.gui.panels.graph.canvas import TEXT_SCALE

    window.resize(1024, 700)
    panel, _ = open_graph(qtbot, window, models.save(model(), tmp_path / "model.onnx"))
    view = panel.view
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    start = view.canvas.rects[view.canvas.index["in:x"]]
    assert view.scale_now() >= TEXT_SCALE, "labels are drawn at the first zoom"
    assert shown.contains(start), "the input is in the first view, whole"
    view.fit()
    drawn = view.mapFromScene(view.canvas.boundingRect()).boundingRect()
    assert view.scale_now() >= TEXT_SCALE or drawn.width() >= 0.5 * view.viewport().width()
