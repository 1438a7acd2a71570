"""What a look at every tab at 1024×700 found cut off: a wrapped line of text hidden by a
squeezed layout, a table's last column behind its edge, two variants' names cut to the same text."""

from tests import models
from tests.gui.test_small_screen import shown, small_window


def whole_lines(label) -> bool:
    """Every wrapped line of the label is painted: it has the height its text takes at its width."""
    return label.isVisible() and label.height() >= label.heightForWidth(label.width())


def many_operators():
    """A chain of a dozen operator types, some with long names (a table taller than its view)."""
    from onnx import TensorProto, helper

    ops = ["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Softplus", "Softsign", "HardSigmoid",
           "ThresholdedRelu", "Floor", "Ceil", "GlobalAveragePool"]
    nodes = [helper.make_node(op, [f"t{i}"], [f"t{i + 1}"], name=f"n{i}") for i, op in enumerate(ops)]
    graph = helper.make_graph(nodes, "many", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info(f"t{len(ops)}", TensorProto.FLOAT, [1, 4, 1, 1])])
    return models._model(graph)


def open_cnn(qtbot, window, tmp_path):
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(models.save(models.cnn(), tmp_path / "cnn.onnx"))


def test_the_overviews_cost_keeps_its_second_line_at_1024_by_700(qtbot, window, tmp_path):
    small_window(qtbot, window)
    open_cnn(qtbot, window, tmp_path)
    panel = shown(qtbot, window, "Overview")
    cost = panel.fact_labels["Cost"]
    qtbot.waitUntil(lambda: cost.text() not in ("–", ""), timeout=30000)
    assert cost.heightForWidth(cost.width()) > cost.fontMetrics().lineSpacing() * 1.5    # it wraps here
    qtbot.waitUntil(lambda: whole_lines(cost), timeout=5000)


def test_the_overviews_share_column_is_in_view_at_1024_by_700(qtbot, window, tmp_path):
    small_window(qtbot, window)
    with qtbot.waitSignal(window.model_opened, timeout=60000):     # more operators than rows in view
        window.open_model(models.save(many_operators(), tmp_path / "many.onnx"))
    table = shown(qtbot, window, "Overview").op_table
    share = table.headers.index("Share %")
    qtbot.waitUntil(lambda: bool(table.rows) and table.verticalScrollBar().isVisible(), timeout=30000)

    def in_view():
        assert table.columnViewportPosition(share) + table.columnWidth(share) <= table.viewport().width()
    qtbot.waitUntil(in_view, timeout=5000)


def test_the_tune_tabs_note_keeps_every_line_at_1024_by_700(qtbot, window):
    small_window(qtbot, window)
    panel = shown(qtbot, window, "Tune")
    panel.summary.setText("<b>Nothing beat your settings.</b> " + "Nothing measured was faster than yours. " * 12)
    for label in (panel.note, panel.summary):       # a long summary squeezed the note's first and last lines
        qtbot.waitUntil(lambda label=label: whole_lines(label), timeout=5000)


def test_the_tune_tabs_apply_button_stays_in_view_under_a_long_summary_at_1024_by_700(qtbot, window):
    from tests.gui.test_small_screen import wholly_in_view

    small_window(qtbot, window)
    panel = shown(qtbot, window, "Tune")
    panel.summary.setText("<b>Nothing beat your settings.</b> " + "Nothing measured was faster than yours. " * 12)
    qtbot.waitUntil(lambda: wholly_in_view(panel.apply_button), timeout=5000)


def test_variants_that_differ_at_the_end_of_their_names_stay_apart_in_the_model_list(qtbot, tmp_path):
    # "bert_torchscript.fp16.onnx [fp16]" and "bert_torchscript.fp16.repaired.onnx [fp16]" were both
    # cut to "bert_torchscript.f…" (and, cut in the middle, both to "bert_torc…nx [fp16]")
    from app.gui.shell.model_list import elide_mode
    from tests.gui.steps import narrow_model_list
    models_list, variants, room, metrics = narrow_model_list(
        qtbot, tmp_path / "bert_torchscript.onnx",
        [(tmp_path / name, "fp16") for name in ("bert_torchscript.fp16.onnx", "bert_torchscript.fp16.repaired.onnx")])
    shown = {metrics.elidedText(models_list.item_for(m).text(0), elide_mode(True), room) for m in variants}
    assert len(shown) == 2, shown


def test_drifts_numbers_keep_the_digits_that_matter(qtbot):
    # "0.0693359" and "43.2871" dB read as noise; a cosine keeps its six digits (0.999987 is not 1)
    from app.gui.panels.drift.views import TENSOR_HEADERS, number_table

    table = number_table(TENSOR_HEADERS)
    qtbot.addWidget(table)
    row = {header: "" for header in TENSOR_HEADERS}
    row.update({"Max abs": 0.0693359, "Max rel": 0.00618011, "Cosine": 0.9999873, "SQNR dB": 43.28713,
                "Lost dB": 1.234567, "Of fp16 max": 0.000123456})
    table.set_rows([[row[h] for h in TENSOR_HEADERS]])
    shown = {h: table.model().index(0, TENSOR_HEADERS.index(h)).data() for h in row if isinstance(row[h], float)}
    assert shown == {"Max abs": "0.0693", "Max rel": "0.00618", "Cosine": "0.999987", "SQNR dB": "43.3",
                     "Lost dB": "1.2", "Of fp16 max": "0.000123"}



def test_the_share_column_comes_back_into_view_when_the_window_shrinks(qtbot, window, tmp_path):
    # opened at 1600 wide the last column was stretched, and that width was kept as its natural one
    window.resize(1600, 1000)
    with qtbot.waitSignal(window.model_opened, timeout=60000):
        window.open_model(models.save(many_operators(), tmp_path / "many.onnx"))
    table = shown(qtbot, window, "Overview").op_table
    qtbot.waitUntil(lambda: bool(table.rows) and table.viewport().width() > 400, timeout=30000)
    small_window(qtbot, window)
    share = table.headers.index("Share %")

    def in_view():
        assert table.columnViewportPosition(share) + table.columnWidth(share) <= table.viewport().width()
    qtbot.waitUntil(in_view, timeout=5000)
