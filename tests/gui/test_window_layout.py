"""The window at small sizes, the Jobs dock, failures in the failure colour, the status bar and
tooltips for text a cell or label cuts short."""

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsView

from app.gui.shell.jobs_dock import MIN_ROWS
from app.gui.shell.main_window import MODEL_LIST_MIN_WIDTH
from app.gui.shell.panel import MIN_PLOT
from app.gui.shell.tabs import PANELS
from app.gui.widgets.theme import plot_colors
from tests import models
from tests.gui.conftest import wait_for_model
from tests.sample_jobs import ABORT, USER_ERROR


@pytest.mark.parametrize("width, height", [(1024, 700), (900, 620)])
def test_every_tab_keeps_its_plots_and_the_model_list_usable(qtbot, window, tmp_path, width, height):
    model = models.transformer_block()
    model.metadata_props.add(key="vocabulary", value="word " * 2000)
    path = models.save(model, tmp_path / "block.onnx")
    window.resize(width, height)
    window.open_model(path)
    wait_for_model(qtbot, window)
    for title, _, _ in PANELS:           # the Profile tab once made the model list collapse
        panel = window.panel(title)
        window.tabs.setCurrentWidget(panel)
        panel.ensure_built()

        def laid_out(panel=panel, title=title):
            assert (window.width(), window.height()) == (width, height), title      # no tab grows the window
            assert window.model_list.width() >= MODEL_LIST_MIN_WIDTH, title
            for view in panel.body.findChildren(QGraphicsView):
                if view.isVisibleTo(panel):
                    assert view.height() >= MIN_PLOT.height() and view.width() >= MIN_PLOT.width(), title
        qtbot.waitUntil(laid_out, timeout=5000)      # the layout runs from posted events: wait for it
    assert window.model_list.width() >= MODEL_LIST_MIN_WIDTH


def test_the_jobs_dock_shows_four_rows(qtbot, window):
    window.resize(1024, 700)
    table = window.jobs_table
    qtbot.waitUntil(lambda: window.jobs_dock.isVisible(), timeout=5000)
    qtbot.waitUntil(lambda: table.viewport().height() >= MIN_ROWS * table.verticalHeader().defaultSectionSize(),
                    timeout=5000)


@pytest.mark.parametrize("entry, fraction", [(ABORT, 0.5), (USER_ERROR, None)])
def test_a_failed_job_is_drawn_in_the_failure_colour(qtbot, window, entry, fraction):
    """Not the fraction it had reached ("50 %") and not a busy (striped) bar."""
    with qtbot.waitSignal(window.jobs.job_finished, timeout=30000):
        job = window.jobs.start("Will fail", entry)
    assert job.state == "failed"
    table = window.jobs_table
    row = table.rows[job.id]
    bar = table.cellWidget(row, 2)
    assert bar.maximum() > 0 and bar.value() == bar.maximum() and bar.text() == "failed"
    bad = plot_colors()["bad"]
    assert bar.palette().color(QPalette.ColorRole.Highlight) == bad
    assert table.item(row, 1).foreground().color() == bad and table.item(row, 1).text() == "failed"
    assert table.item(row, 6).foreground().color() == bad


def test_a_status_bar_message_stops_before_the_permanent_labels(qtbot, window):
    window.resize(1024, 700)
    window.model_label.setText("a_model_with_a_rather_long_file_name_of_many_words.onnx: 571.8 KB")
    window.show_error("Convert model.onnx to int8-static", "the calibration data has 3 inputs but the model "
                      "takes 2; check the file and try again\n\nThe details are in /tmp/log.txt")
    message = window.status_line.message

    def laid_out():
        assert message.isVisible() and message.is_elided()
        assert message.geometry().right() < window.model_label.geometry().left()
    qtbot.waitUntil(laid_out, timeout=5000)
    assert "The details are in /tmp/log.txt" in message.toolTip()
    assert window.model_label.geometry().right() < window.providers_label.geometry().left()
    assert window.model_label.text().endswith("571.8 KB")


def test_long_metadata_and_shapes_have_their_whole_text_as_a_tooltip(qtbot, window, tmp_path):
    model = models.transformer_block(seq="sequence_length_of_the_whole_conversation_so_far")
    model.metadata_props.add(key="vocabulary", value="word " * 2000)
    path = models.save(model, tmp_path / "block.onnx")
    window.resize(1024, 700)
    window.open_model(path)
    wait_for_model(qtbot, window)
    overview = window.panel("Overview")
    window.tabs.setCurrentWidget(overview)
    overview.ensure_built()
    metadata = overview.fact_labels["Metadata"]
    qtbot.waitUntil(lambda: metadata.height() < 3 * metadata.fontMetrics().lineSpacing(),   # one line, not a wall
                    timeout=5000)
    assert metadata.toolTip().startswith("vocabulary: word word") and "10,000 characters" in metadata.toolTip()
    table = overview.io_table
    shape_row = next(r for r in range(table.proxy.rowCount()) if "sequence_length" in table.proxy.index(r, 3).data())
    shape = table.proxy.index(shape_row, 3)
    assert "sequence_length_of_the_whole_conversation_so_far" in shape.data(Qt.ItemDataRole.ToolTipRole)


def test_a_long_job_title_is_one_line_with_a_tooltip(qtbot, window):
    title = "Convert a_model_with_a_very_long_name_indeed_from_an_exporter.onnx to int8-static"
    with qtbot.waitSignal(window.jobs.job_finished, timeout=30000):
        job = window.jobs.start(title, USER_ERROR)
    table = window.jobs_table
    item = table.item(table.rows[job.id], 0)
    assert item.toolTip() == title and not table.wordWrap()
    assert table.rowHeight(table.rows[job.id]) == table.verticalHeader().defaultSectionSize()


def test_the_tune_tab_does_not_ask_for_a_model_when_one_is_selected(qtbot, window, tmp_path):
    tune = window.panel("Tune")
    tune.ensure_built()
    assert "Open a model" in tune.summary.text()
    window.open_model(models.save(models.mlp(), tmp_path / "m.onnx"))
    wait_for_model(qtbot, window)
    assert "m.onnx" in tune.summary.text() and "Open a model" not in tune.summary.text()


def test_the_session_settings_fit_the_tab_at_1024_wide(window):
    """Values and the user's data folder take a row each: on one row they made the page 1,150 px wide."""
    panel = window.panel("Session")
    panel.ensure_built()
    page = panel.tabs.widget(0).widget()
    assert page.minimumSizeHint().width() <= 790           # the tab's viewport in a 1024×700 window
