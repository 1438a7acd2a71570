"""The Graph tab's overlays (profile, provider, diff) and the tables that lead to a node."""

from __future__ import annotations

import onnx
from onnx import helper

from app.gui.panels.graph.overlays import DIFF_COLOURS, NO_VALUE, RAMP, WARNING, _micros
from app.core.session.jobs import PLACEMENT
from tests import models
from tests.gui.test_graph_panel import open_graph
from tests.gui.test_profiling import load
from tests.traces import handmade_nodes, write_trace


def colour_of(panel, node_id: str) -> str:
    canvas = panel.view.canvas
    return canvas.palette[int(canvas.fill[canvas.index[node_id]])].name()


def profile_of(qtbot, window, model, tmp_path):
    """The handmade trace (conv1, relu1, conv2, fc: the cnn's names) as a profile of `model`."""
    profile = load(qtbot, window, write_trace(tmp_path / "hand.json", handmade_nodes(), runs=3))
    profile.add_profile("hand", {**profile.profiles[-1][1], "model_path": model.path})
    return profile


def test_the_profile_overlay_colours_nodes_by_their_time(qtbot, window, tmp_path):
    panel, model = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    panel.show_overlay("profile")
    assert panel.tools.measure_button.text() == "Profile now" and "no profile" in panel.legend.note
    profile_of(qtbot, window, model, tmp_path)
    window.tabs.setCurrentWidget(panel)
    # steady runs: conv1 100 µs, conv2 60, fc 20, relu1 10
    assert colour_of(panel, "0") == RAMP[-1] and colour_of(panel, "1") == RAMP[0]
    assert colour_of(panel, "3") == NO_VALUE, "relu2 was not timed"
    assert panel.legend.entries[0] == (RAMP[0], "10 µs–15.8 µs")
    panel.select("0")
    assert "Profile: 100 µs per run" in panel.node_panel.text.toPlainText()
    assert "Achieved 4.51 GFLOP/s in the profile" in panel.node_panel.text.toPlainText()   # 450.56 kFLOPs
    assert "All Conv nodes together: " in panel.node_panel.text.toPlainText()             # conv1 and conv2
    panel.show_overlay("flops")                         # conv2: 1.2 MFLOPs; flatten moves data: 0
    assert colour_of(panel, "2") == RAMP[-1] and colour_of(panel, "5") == NO_VALUE
    panel.show_overlay("none")
    assert panel.view.canvas.palette[int(panel.view.canvas.fill[1])].name() == "#c9dcf2"


def test_the_provider_overlay_warns_of_cpu_fallback(qtbot, window, tmp_path):
    panel, model = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    placement = {"providers": ["CUDAExecutionProvider", "CPUExecutionProvider"],
                 "nodes": [{"name": n, "op_type": "", "provider": "CUDAExecutionProvider"} for n in ("conv1", "relu1")]
                 + [{"name": "fc", "op_type": "Gemm", "provider": "CPUExecutionProvider"}]}
    panel.show_overlay("provider")
    window.context.publish(PLACEMENT, model.path, placement)
    assert colour_of(panel, "6") == WARNING and colour_of(panel, "0") not in (WARNING, NO_VALUE)
    assert colour_of(panel, "2") == NO_VALUE
    assert (WARNING, "CPU (fallback)") in panel.legend.entries
    panel.select("6")
    assert "Runs on CPU — a CPU fallback" in panel.node_panel.text.toPlainText()


def _variant(path):
    """The cnn with an Identity before fc and conv2's padding changed."""
    model = models.cnn()
    nodes = model.graph.node
    nodes[2].attribute[0].CopyFrom(helper.make_attribute("pads", [0, 0, 0, 0]))
    nodes[6].input[0] = "f2"
    nodes.insert(6, helper.make_node("Identity", ["f"], ["f2"], name="extra"))
    onnx.save(model, path)
    return path


def test_a_diff_is_drawn_on_the_variant_and_listed(qtbot, window, tmp_path):
    _, source = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    panel, variant = open_graph(qtbot, window, _variant(tmp_path / "variant.onnx"), parent=source)
    assert panel.tools.partner.currentData() == source.path, "a variant is diffed against its source first"
    panel.tools.start_diff()
    qtbot.waitUntil(lambda: panel.diff_box.result_for(variant.path) is not None, timeout=60000)
    assert panel.overlay.currentData() == "diff"
    extra = next(i for i, n in zip(panel.view.canvas.ids, panel.view.canvas.nodes) if n["name"] == "extra")
    assert colour_of(panel, extra) == DIFF_COLOURS["added"]
    assert colour_of(panel, "2") == DIFF_COLOURS["changed"]
    assert colour_of(panel, "1") == DIFF_COLOURS["unchanged"]
    rows = {(r[0], r[1]) for r in panel.diff_box.table.rows}
    assert {("added", "extra"), ("changed", "conv2"), ("changed", "fc")} <= rows
    assert "1 added, 0 removed" in panel.diff_box.heading.text()
    panel.diff_box.table.selectRow(next(i for i, r in enumerate(panel.diff_box.table.rows) if r[1] == "conv2"))
    assert panel.selected == "2"
    assert "attribute pads: [1, 1, 1, 1] → [0, 0, 0, 0]" in panel.node_panel.text.toPlainText()


def test_a_profile_row_centres_the_graph_on_its_node(qtbot, window, tmp_path):
    panel, model = open_graph(qtbot, window, models.save(models.cnn(), tmp_path / "cnn.onnx"))
    panel.view.resize(300, 200)
    panel.view.zoom_to(1.0)
    panel.view.centerOn(0, 0)
    profile = profile_of(qtbot, window, model, tmp_path)
    table = profile.nodes.table
    table.selectRow(next(i for i, r in enumerate(table.rows) if r[1] == "conv2"))
    assert panel.selected == "2"
    box = panel.view.canvas.rects[panel.view.canvas.index["2"]]
    seen = panel.view.mapToScene(panel.view.viewport().rect()).boundingRect()
    assert seen.contains(box), "the node is in sight"
    assert abs(seen.center().y() - box.center().y()) < 2, "and in the middle (the drawing is narrower than the view)"
    assert window.tabs.currentWidget() is profile, "a single click leaves the user where they are"
    table.doubleClicked.emit(table.currentIndex())
    assert window.tabs.currentWidget() is panel


def test_a_placement_row_chosen_before_the_graph_is_drawn_is_shown_once_it_is(qtbot, window, tmp_path):
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        model = window.open_model(path)
    session = window.panel("Session")
    session.ensure_built()
    session.placement.model_path = model.path
    session.placement.show_result({"method": "assignment", "summary": "", "warnings": [], "by_provider": {},
                                   "nodes": [{"name": "relu2", "op_type": "Relu", "provider": "CPUExecutionProvider"}]})
    session.placement.nodes.selectRow(0)
    panel = window.panel("Graph")
    window.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.selected == "3", timeout=60000)


def test_the_profile_overlay_puts_a_fused_convs_time_on_the_conv(qtbot, window, tmp_path):
    from app.core.profile.jobs import PROFILE
    from app.core.runner.process import run_job

    panel, model = open_graph(qtbot, window, models.save(models.conv_bn_relu(), tmp_path / "cbr.onnx"))
    profile = run_job(PROFILE, {"model": model.path, "runs": 3, "out": str(tmp_path / "cbr.json")})   # level 'all'
    panel.show_overlay("profile")
    window.context.publish(PROFILE, model.path, profile)
    assert colour_of(panel, "0") != NO_VALUE and colour_of(panel, "1") == NO_VALUE   # conv0 timed, bn0 fused
    conv0 = next(row for row in profile["by_node"] if row["name"] in ("conv0", "r0_nchwc"))   # FusedConv or NCHWc
    panel.select("0")
    assert f"Profile: {_micros(conv0['per_run_us'])} per run" in panel.node_panel.text.toPlainText()
    panel.select("1")
    assert "fused by ORT into Conv conv0; its time counts there" in panel.node_panel.text.toPlainText()
    panel.select("6")
    assert "removed by ORT's optimiser" in panel.node_panel.text.toPlainText()
    assert (NO_VALUE, "no time of its own (fused or removed by ORT)") in panel.legend.entries
