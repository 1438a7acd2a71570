"""The Drift tab: reached from a conversion and from Compare; the first drift marked; the
one-click repair and its before-and-after."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from tests import drift_models, models
from tests.gui.steps import open_and_wait, tab
from app.core.drift.jobs import DRIFT
from app.gui.shell.handover import DriftPair


def _convert_trap(qtbot, window, tmp_path):
    source = models.save(drift_models.fp16_clip_trap(), tmp_path / "trap.onnx")
    open_and_wait(qtbot, window, source)
    panel = tab(window, "Convert")
    panel.select_kind("fp16")
    panel.speed.setChecked(False)
    with qtbot.waitSignal(window.model_opened, timeout=120000):
        panel.start()
    qtbot.waitUntil(lambda: panel.job is None, timeout=30000)
    return panel


def test_the_drift_tab_follows_compare(window):
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert titles[titles.index("Compare") + 1] == "Drift"


def test_from_a_conversion_the_first_drift_is_marked_and_one_click_repairs_it(qtbot, window, tmp_path):
    convert = _convert_trap(qtbot, window, tmp_path)
    assert "FAILED" in convert.card.verdict.text() and convert.drift_button.isEnabled()
    drift = window.panel("Drift")
    convert.drift_button.click()
    assert window.tabs.currentWidget() is drift
    qtbot.waitUntil(lambda: drift.result is not None, timeout=120000)
    assert "layer2" in drift.first_drift.text() and "MatMul" in drift.first_drift.text()
    assert drift.first_nonfinite.text() == "First NaN/Inf: none"
    source = drift.result["source"]
    assert window.context.latest(DRIFT, source) is drift.result, "the Graph tab's drift overlay gets it"
    graph = window.panel("Graph")
    graph.ensure_built()
    graph.picture = {"path": source}          # as once the source is drawn
    assert graph.sources()["drift"] is drift.result
    graph.picture = None
    first = drift.result["first_drift"]["index"]
    assert drift.table.rows[first][2] == "layer2" and drift.table.rows[first][4] == "NO"
    assert drift.table.cell(first, 0, Qt.ItemDataRole.BackgroundRole).style() != Qt.BrushStyle.NoBrush     # marked
    assert drift.table.cell(0, 0, Qt.ItemDataRole.BackgroundRole) is None
    assert drift.selected_node() == "layer2" and drift.keep_button.isEnabled()
    drift.keep_button.click()
    qtbot.waitUntil(lambda: drift.repair_result is not None and drift.job is None and drift.result is not None,
                    timeout=180000)
    assert drift.result["variant"] == drift.repair_result["output"]
    step = drift.steps.rows[0]
    assert step[1] == "layer2" and step[2] == "pass"
    assert "Passed" in drift.outcome.text() and "layer2" in drift.outcome.text()
    assert drift.result["variant"] == drift.repair_result["output"]                # after: the repaired variant
    assert drift.result["tensors"][-1]["name"] == "y" and drift.result["tensors"][-1]["passed"]
    assert "after the repair" in drift.first_drift.text()          # not the unrepaired variant's past tolerance
    assert window.current_model().extra["conversion"]["options"]["node_block_list"] == ["layer2"]


def test_compare_opens_the_drift_of_the_selected_model(qtbot, window, monkeypatch):
    compare = window.panel("Compare")
    compare.ensure_built()
    row = {"label": "m", "path": "/a.onnx", "size_bytes": 1, "latency_ms": {"p50": 1.0, "p90": 1.0, "p99": 1.0},
           "throughput_per_s": 1.0, "speedup": 1.0, "speedup_ci": [1.0, 1.0], "verdict": "reference",
           "fidelity": None, "providers": ["CPUExecutionProvider"]}
    result = {"baseline": "m", "models": [row, {**row, "path": "/b.onnx", "label": "b"},
                                          {**row, "path": "/c.onnx", "label": "c"}], "alternation": None}
    compare.show_result(result)
    asked = []
    monkeypatch.setattr(compare.context, "run_again", lambda kind, entry: asked.append((kind, entry)))
    compare.show_drift()
    compare.table.selectRow(2)
    compare.show_drift()
    assert asked == [(DRIFT, DriftPair("/a.onnx", "/b.onnx")), (DRIFT, DriftPair("/a.onnx", "/c.onnx"))]


def test_a_repair_never_replaces_the_variant_and_asks_before_replacing_a_file(window, tmp_path, monkeypatch):
    drift = window.panel("Drift")
    drift.ensure_built()
    variant = tmp_path / "m.fp16.onnx"
    variant.write_bytes(b"the user's variant")
    drift.pair = DriftPair(str(tmp_path / "m.onnx"), str(variant),
                           {"kind": "fp16", "input": str(tmp_path / "m.onnx"), "output": str(variant),
                            "options": {}, "fidelity": {"tolerance": {}}})
    drift.result = {"remade_as": {"kind": "fp16", "options": {}}}
    config = window.context.session.config()
    conversion = drift.repair_conversion(config)
    assert conversion.output == str(tmp_path / "m.fp16.repaired.onnx") and conversion.force is False
    (tmp_path / "m.fp16.repaired.onnx").write_bytes(b"an earlier repair")
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda _parent, title, text, *_: asked.append((title, text)) or QMessageBox.StandardButton.No)
    drift.repair()
    assert asked == [("Replace the file?", f"{tmp_path / 'm.fp16.repaired.onnx'} already exists. Replace it with "
                                           "the repaired variant?")]
    assert drift.job is None     # declined: nothing runs
    assert variant.read_bytes() == b"the user's variant"


def test_a_steps_speed_has_two_decimals_like_its_interval():
    from app.gui.panels.drift.views import step_row

    step = {"step": 1, "added": ["a"], "cosine": 0.0, "max_abs_diff": 1.0, "passed": False, "check": "failed",
            "problem": "y: all zeros where the source's are not", "first_drift": None, "first_nonfinite": None,
            "speed": {"ratio": 1.00669, "ratio_ci": [0.82, 1.59], "verdict": "could-not-tell", "conclusive": False}}
    row = step_row(step)
    assert row[5:8] == ["×1.01", "0.82–1.59", "could not tell"]
    assert row[2] == "y: all zeros where the source's are not"


def test_after_a_passed_repair_the_first_drift_line_and_the_outcome_tell_one_story():
    from app.gui.panels.drift.views import repaired_story

    repair = {"output": "v.repaired.onnx", "repair": {"passed": True}}
    inside = {"tensor": "h", "node": "n", "op_type": "MatMul", "output": False}
    label, note = repaired_story({"variant": "v.repaired.onnx", "first_drift": inside}, repair)
    assert "after the repair" in label and "outputs are within tolerance" in label and "inside" in note
    output = {**inside, "tensor": "y<b>", "output": True}
    label, note = repaired_story({"variant": "v.repaired.onnx", "first_drift": output}, repair)
    assert "after the repair" in label and "check passed on the conversion's inputs" in note and "y&lt;b&gt;" in note
    assert "every tensor within" in repaired_story({"variant": "v.repaired.onnx", "first_drift": None}, repair)[1]
    assert repaired_story({"variant": "v.onnx", "first_drift": inside}, repair) == ("First drift", "")
    assert repaired_story({"variant": "v.onnx", "first_drift": inside}, None) == ("First drift", "")


def test_drift_runs_on_the_sources_inputs_and_says_where_they_came_from(qtbot, window, tmp_path):
    from onnxconverter_common import float16

    source_path = models.save(models.mlp(width=16, depth=2), tmp_path / "mlp.onnx")
    variant_path = models.save(float16.convert_float_to_float16(models.mlp(width=16, depth=2), keep_io_types=True),
                               tmp_path / "mlp.fp16.onnx")
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(source_path)
    source = window.current_model()
    window.session.set(**{"inputs.dims": {"batch": 3}})          # the source's size, set in the Session tab
    drift = window.panel("Drift")
    drift.ensure_built()
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.context.open_model(variant_path, parent=source, kind="fp16")
    assert window.current_model().path == str(variant_path)
    assert window.session.get("inputs.dims") == {}, "the variant has inputs settings of its own"
    assert drift.pair.source == str(source_path)
    assert "Session tab's plan: batch 3 set there" in drift.inputs_label.text()
    drift.start()
    qtbot.waitUntil(lambda: drift.result is not None and drift.job is None, timeout=120000)
    assert window.last_error is None
    assert [row["shape"] for row in drift.result["inputs"]] == [[3, 16]], "the source's plan, not the variant's"
    assert drift.inputs_label.text() == "Ran on the source's inputs: x 3×16 (generated)"
    assert drift.inputs_label.textFormat() == Qt.TextFormat.PlainText


def test_an_inputs_origin_is_named_truthfully():
    from app.core.session.inputs import origin_word

    assert origin_word({"source": "file", "reason": "your file", "values": "yours"}) == "your file"
    assert origin_word({"source": "file", "reason": "sample a.npz of your data folder", "values": "yours"}) == \
        "your data"
    assert origin_word({"source": "default", "reason": "your data folder: 1 image; size: 224 pixels"}) == "your data"
    assert origin_word({"source": "probed", "reason": "probed: 64 (32 was refused)", "values": "random"}) == "probed"
    assert origin_word({"source": "user", "reason": "your batch", "values": "random normal, seed 0"}) == "generated"
    assert origin_word({"source": "default", "reason": "batch 1", "values": "probed: zeros (…)"}) == "probed"


def test_a_drift_shown_comes_back_when_its_variant_is_chosen_again(qtbot, window, tmp_path):
    # choosing another variant (in the list, or by Compare's selection) cleared the drift and its
    # repair, and choosing the first again showed an empty table
    from app.gui.shell.open_model import OpenModel

    convert = _convert_trap(qtbot, window, tmp_path)
    drift = window.panel("Drift")
    convert.drift_button.click()
    qtbot.waitUntil(lambda: drift.result is not None and drift.job is None, timeout=120000)
    variant, rows = window.context.model_at(drift.pair.variant), list(drift.table.rows)
    other = OpenModel(str(tmp_path / "trap.other.onnx"), kind="int8-dynamic", parent=variant.parent)
    window.model_list.add(other)
    window.model_list.select(other)
    qtbot.waitUntil(lambda: drift.result is None and not drift.table.rows, timeout=5000)
    window.model_list.select(variant)
    qtbot.waitUntil(lambda: drift.result is not None, timeout=5000)
    assert drift.table.rows == rows and "layer2" in drift.first_drift.text()
