"""The Session tab's Inputs table: a cell per open dimension bound to the SessionState, the
plan's sources, and Find working inputs."""

import pytest

from app.gui.shell.model_list import OpenModel
from tests import models, sample_jobs

SUMMARY = {"inputs": [{"name": "ids", "dtype": "int64", "shape": ["batch", "sequence"]},
                      {"name": "mask", "dtype": "int64", "shape": ["batch", "sequence"]},
                      {"name": "pixels", "dtype": "float32", "shape": ["?", 3, 8, 8]}],
           "outputs": [], "total_bytes": 1}


@pytest.fixture
def panel(qtbot, window):
    panel = window.panel("Session")
    window.tabs.setCurrentWidget(panel)
    panel.ensure_built()
    yield panel
    qtbot.waitUntil(lambda: not any(j.state == "running" for j in window.jobs.jobs), timeout=30000)


def source_text(table, row: int) -> str:
    """The Source cell of `row`, found by its header as a reader finds it."""
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    return table.item(row, headers.index("Source")).text()


def choose(table, name: str, action: str) -> None:
    """Pick `action` in the menu of `name`'s Values button."""
    menu = table.value_buttons[name].menu()
    next(a for a in menu.actions() if a.text() == action).trigger()


def open_summary(window, path="/m.onnx", summary=SUMMARY):
    model = OpenModel(path, summary=summary)
    window.model_list.add(model)
    window.model_list.select(model)
    return model


def test_a_row_per_input_and_a_cell_per_open_dimension(panel, window):
    open_summary(window)
    table = panel.inputs_table
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["ids", "mask", "pixels"]
    assert set(table.spins) == {("ids", 0), ("ids", 1), ("mask", 0), ("mask", 1), ("pixels", 0)}
    fixed = table.item(2, 3)                       # pixels' channels: dim 1, shown, not editable
    assert fixed.text() == "3" and table.cellWidget(2, 3) is None
    assert table.horizontalHeaderItem(3).text() == "dim 1"
    assert table.item(2, 0).toolTip() == "pixels: float32, declared [?, 3, 8, 8]"
    assert table.row_shape("ids") == [1, 128] and table.spins[("ids", 0)].font().italic()
    assert window.session.get("inputs.dims") == {}, "opening a model sets no size: the plan still chooses"


def test_a_named_dimension_is_shared_and_an_unnamed_one_sets_the_whole_shape(panel, window):
    open_summary(window)
    table = panel.inputs_table
    table.spins[("ids", 0)].setValue(4)
    assert window.session.get("inputs.dims") == {"batch": 4}
    assert table.spins[("mask", 0)].value() == 4 and not table.spins[("mask", 0)].font().italic()
    table.spins[("pixels", 0)].setValue(2)
    assert window.session.get("inputs.shapes") == {"pixels": [2, 3, 8, 8]}
    assert window.session.get("inputs.dims") == {"batch": 4}
    assert window.session.config().inputs.shapes == {"pixels": [2, 3, 8, 8]}


def test_the_state_redraws_the_cells_without_writing_back(panel, window, monkeypatch):
    open_summary(window)
    writes = []
    original = window.session.set
    monkeypatch.setattr(window.session, "set", lambda **values: writes.append(values) or original(**values))
    original(**{"inputs.dims": {"sequence": 7}, "inputs.shapes": {"pixels": [5, 3, 8, 8]}})
    table = panel.inputs_table
    assert table.row_shape("ids") == [1, 7] and table.row_shape("pixels") == [5, 3, 8, 8]
    assert writes == []


def test_a_file_per_input(panel, window):
    open_summary(window)
    table = panel.inputs_table
    table.choose_file = lambda name: f"/data/{name}.npy"
    choose(table, "ids", "From a .npy file…")
    assert window.session.get("inputs.files") == {"ids": "/data/ids.npy"}
    assert "ids.npy" in table.value_buttons["ids"].text() and table.value_buttons["mask"].text() == "random ▾"
    table.clear_file("ids")
    assert window.session.get("inputs.files") == {}


def test_one_value_for_every_element_replaces_a_file(panel, window):
    open_summary(window)
    table = panel.inputs_table
    table.choose_file = lambda name: f"/data/{name}.npy"
    choose(table, "ids", "From a .npy file…")
    table.choose_value = lambda name: 3.0
    choose(table, "ids", "One value for every element…")
    assert window.session.get("inputs.values") == {"ids": 3.0} and window.session.get("inputs.files") == {}
    assert table.value_buttons["ids"].text() == "= 3 ▾"
    assert window.session.config().inputs.values == {"ids": 3.0}
    table.clear_file("ids")
    assert window.session.get("inputs.values") == {} and table.value_buttons["ids"].text() == "random ▾"


def test_an_input_without_a_declared_shape_takes_a_typed_one(panel, window):
    open_summary(window, summary={"inputs": [{"name": "x", "dtype": "float32", "shape": None}], "outputs": [],
                                  "total_bytes": 1})
    edit = panel.inputs_table.shape_edits["x"]
    edit.setText("2, 3")
    edit.editingFinished.emit()
    assert window.session.get("inputs.shapes") == {"x": [2, 3]}
    edit.setText("2, three")
    edit.editingFinished.emit()
    assert "whole numbers" in window.session.problems()["inputs.shapes"]


def test_a_plan_from_any_tab_shows_its_sources_and_flags_guesses(panel, window):
    model = open_summary(window)
    rows = [{"name": "ids", "dtype": "int64", "shape": [1, 128], "source": "default",
             "reason": "length 128, a usual text length", "values": "random ids below 1,000"},
            {"name": "mask", "dtype": "int64", "shape": [1, 128], "source": "model", "reason": "as ids has it",
             "values": "ones (a mask)"}]
    window.context.report_inputs(model.path, rows)
    table = panel.inputs_table
    assert source_text(table, 0) == "⚠ default: length 128, a usual text length"
    assert source_text(table, 1) == "model: as ids has it"
    window.context.report_inputs(model.path, [rows[0], rows[1] | {"source": "probed", "reason": "probed: 64 (32 "
                                                                                               "was refused)"}])
    assert source_text(table, 1) == "probed: 64 (32 was refused)", "said once"
    window.context.report_inputs(model.path, rows)
    assert panel.guess_note.isVisibleTo(panel) and "sizes chosen by default: check them" in panel.guess_note.text()
    other = open_summary(window, "/other.onnx")
    assert not panel.guess_note.isVisibleTo(panel), "a plan belongs to its model"
    window.model_list.select(model)
    assert panel.guess_note.isVisibleTo(panel)
    assert other is not model


def probe(qtbot, panel, monkeypatch):
    import app.gui.panels.session.panel as session_panel
    monkeypatch.setattr(session_panel, "PROBE_INPUTS", sample_jobs.PROBE_INPUTS_STAND_IN)
    with qtbot.waitSignal(panel.control.ended, timeout=10000):
        panel.control.start_button.click()


def test_found_inputs_fill_the_table_and_the_state(qtbot, panel, window, monkeypatch):
    open_summary(window)
    probe(qtbot, panel, monkeypatch)
    assert window.session.get("inputs.dims") == {}, "found, not given: later results still say so"
    assert window.session.get("inputs.probed") == {"batch": 2, "sequence": 64, "pixels[0]": 2}
    assert window.session.get("inputs.shapes") == {}, "an unnamed dimension the probe found is not the user's shape"
    table = panel.inputs_table
    assert table.row_shape("pixels") == [2, 3, 8, 8] and table.spins[("pixels", 0)].font().italic()
    assert "not set" in table.spins[("pixels", 0)].toolTip()
    assert table.row_shape("ids") == [2, 64] and source_text(table, 2) == \
        "probed: ran with batch 2"
    assert "These inputs run: ids 2×64 (probed), mask 2×64 (probed), pixels 2×3×8×8 (probed)" in panel.control.status.text()
    assert not panel.guess_note.isVisibleTo(panel) and panel.control.start_button.isEnabled()


def test_when_nothing_works_the_probe_says_why_in_one_line(qtbot, panel, window, monkeypatch):
    open_summary(window, "/refuses.onnx")
    probe(qtbot, panel, monkeypatch)
    text = panel.control.status.text()
    assert "No inputs worked: Got invalid dimensions for input: ids" in text and "more" not in text
    assert window.session.get("inputs.dims") == {} and window.session.get("inputs.probed") == {}, \
        "sizes that did not work are not taken"
    assert panel.guess_note.isVisibleTo(panel)


def test_the_real_probe_runs_the_model_on_its_plan(qtbot, panel, window, tmp_path):
    path = models.save(models.transformer_block(), tmp_path / "block.onnx")
    open_summary(window, str(path), {"inputs": [{"name": "x", "dtype": "float32", "shape": ["batch", "sequence", 32]}],
                                     "outputs": [], "total_bytes": 1})
    with qtbot.waitSignal(panel.control.ended, timeout=60000):
        panel.control.start_button.click()
    assert "These inputs run: x 1×128×32" in panel.control.status.text(), panel.control.status.text()
    assert window.session.get("inputs.probed") == {"batch": 1, "sequence": 128}
    assert panel.guess_note.isVisibleTo(panel), "the sizes ran, but they are still the defaults"


def test_before_a_plan_an_image_shows_the_size_the_plan_would_choose_and_long_names_fit(panel, window):
    exported = {"inputs": [{"name": "x", "dtype": "float",
                            "shape": ["p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"]}],
                "outputs": [], "total_bytes": 1, "metadata": {}}
    open_summary(window, "/det.onnx", exported)
    table = panel.inputs_table
    assert table.row_shape("x") == [1, 3, 224, 224], "the plan's image default, not 1×3×1×1"
    spin = table.spins[("x", 2)]
    assert [table.spins[("x", i)].prefix() for i in (0, 2, 3)] == ["…0: ", "…1: ", "…2: "], "the shared start left out"
    assert spin.toolTip().startswith("p2o.DynamicDimension.1: not set")
    sized = dict(exported, metadata={"imgsz": "[320, 320]"})
    open_summary(window, "/yolo.onnx", sized)
    assert table.row_shape("x") == [1, 3, 320, 320], "the metadata's image size"


def test_long_dimension_names_are_shortened_only_as_far_as_needed():
    from app.gui.panels.session.inputs_table import short_names

    assert short_names(["batch", "sequence"]) == {"batch": "batch", "sequence": "sequence"}
    assert short_names(["p2o.DynamicDimension.0"]) == {"p2o.DynamicDimension.0": "…Dimension.0"}
    assert short_names(["unk__101", "unk__102"]) == {"unk__101": "…1", "unk__102": "…2"}
    assert short_names(["batch_size", "batch_size_2"])["batch_size"] == "batch_size", "a whole name is no prefix"


def test_sizes_found_for_one_model_do_not_run_another(qtbot, panel, window, monkeypatch):
    first = open_summary(window)
    probe(qtbot, panel, monkeypatch)
    assert window.session.get("inputs.probed")
    other = open_summary(window, "/other.onnx")
    assert window.session.get("inputs.probed") == {} and window.session.get("inputs.shapes") == {}
    window.model_list.select(first)
    assert window.session.get("inputs.probed") == {"batch": 2, "sequence": 64, "pixels[0]": 2}
    assert other is not first
