"""A file name is text from anyone: labels show it as it is, never as markup (issue 22)."""

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt   # where PySide6 keeps Qt::mightBeRichText
from PySide6.QtGui import QTextDocument

from app.gui.panels.graph.tools import DiffBox
from tests.gui.test_benchmark_panels import add_model

NAME = "<img src=q><b>bold"


def rendered(label) -> str:
    """What a QLabel shows, as Qt decides it: markup when its format is rich, or automatic
    and the text looks like markup."""
    text, kind = label.text(), label.textFormat()
    if kind == Qt.TextFormat.PlainText or (kind == Qt.TextFormat.AutoText and not GuiQt.mightBeRichText(text)):
        return text
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def test_the_overview_heading_shows_a_model_being_read_by_its_plain_name(window, tmp_path):
    model = add_model(window, tmp_path / f"{NAME}.onnx")
    overview = window.panel("Overview")
    overview.ensure_built()
    overview.model_changed(model)
    assert f"{NAME}.onnx — reading…" in rendered(overview.heading)


def test_the_graph_diff_heading_shows_file_names_as_they_are(qtbot, tmp_path):
    box = DiffBox(None)
    qtbot.addWidget(box)
    box.show_diff("b", {"a": str(tmp_path / f"{NAME}.onnx"), "b": str(tmp_path / "plain.onnx"), "added": [],
                        "removed": [], "changed": [], "matched": 3})
    assert rendered(box.heading).startswith(f"{NAME}.onnx → plain.onnx: 0 added")


def shown_tip(tip: str) -> str:
    """What a tooltip or message box shows: Qt reads it as markup when it looks like markup."""
    if not GuiQt.mightBeRichText(tip):
        return tip
    document = QTextDocument()
    document.setHtml(tip)
    return document.toPlainText()


def test_a_table_cells_tooltip_shows_a_name_with_markup_as_written(qtbot):
    from app.gui.widgets.table import DataTable

    table = DataTable(["name", "count"])
    qtbot.addWidget(table)
    table.set_rows([[NAME, 1], ["plain", 2]])
    assert shown_tip(table.cell(0, 0, Qt.ItemDataRole.ToolTipRole)) == NAME
    assert table.cell(1, 0, Qt.ItemDataRole.ToolTipRole) == "plain", "text that is not markup is left as it is"


def test_a_log_entry_quoting_a_name_stays_one_line_without_escapes(qtbot):
    from app.gui.shell.log_dock import LogView

    view = LogView()
    qtbot.addWidget(view)
    view.add("inspect x\x1b]0;t\x07", "warning", "input 'x\nerror: forged line\x1b[2J' was guessed")
    lines = view.toPlainText().splitlines()
    assert len(lines) == 1 and "\x1b" not in lines[0] and "x\\x0aerror: forged line\\x1b[2J" in lines[0]


def test_a_results_caption_shows_the_name_as_written_and_whole_in_its_tooltip(qtbot, tmp_path):
    from app.gui.widgets.run_caption import NARROWEST_PX, RunCaption

    caption = RunCaption()
    qtbot.addWidget(caption)
    caption.show_run(str(tmp_path / f"{NAME}{'_long' * 30}.onnx"), f"{NAME}{'_long' * 30}.onnx", [])
    assert rendered(caption).startswith(f"{NAME}{'_long' * 30}.onnx · inputs not reported")
    assert shown_tip(caption.toolTip()) == f"{NAME}{'_long' * 30}.onnx", "cut at the edge, whole in the tooltip"
    assert caption.minimumSizeHint().width() <= NARROWEST_PX, "a name with nowhere to wrap does not widen the tab"
