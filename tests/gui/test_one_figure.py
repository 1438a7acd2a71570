"""One figure per fact, written alike: counts whole, shares to one decimal, the histogram's marks
the exact figures, key columns in view, labelled ticks on a short log axis."""

import numpy as np

from app.gui.widgets.axes import log_ticks
from app.gui.widgets.chart_base import BarChart, value_texts
from app.gui.widgets.table import DataTable


def test_counts_are_written_whole_and_shares_to_one_decimal(qtbot):
    assert value_texts([3.0, 3.0, 2.0, 1.0], durations=False) == ["3", "3", "2", "1"]
    assert value_texts([620.0, 10.0], durations=False) == ["620", "10"]
    chart = BarChart("share", decimals=1)
    qtbot.addWidget(chart)
    chart.set_bars(["a", "b"], [100 / 12, 25.0])
    assert [t.toPlainText().strip() for t in chart.texts] == ["8.3", "25.0"]
    table = DataTable(["Operator", "Count", "Share %"])
    qtbot.addWidget(table)
    table.fixed_decimals = {"Share %": 1}
    table.set_rows([["Conv", 3, 25.0], ["Gemm", 1, 100 / 12]])
    assert [table.proxy.index(r, 2).data() for r in range(2)] == ["25.0", "8.3"]


def test_a_key_column_stays_in_view_beside_long_names(qtbot):
    table = DataTable(["Model", "Speedup", "95 % interval", "Verdict", "p50 ms"])
    qtbot.addWidget(table)
    table.key_columns = ("Verdict",)
    table.resize(520, 200)
    table.show()
    long = "rapidocr_onnxruntime__ch_ppocr_mobile_v2.0_cls_infer_and_more_words.onnx"
    table.set_rows([[long, 1.0, "1.000 – 1.000", "reference", 0.137], [long + "x", 0.971, "0.8 – 1.4", "no-difference",
                                                                      0.14]])
    verdict = 3
    qtbot.waitUntil(lambda: table.columnViewportPosition(verdict) + table.columnWidth(verdict)
                    <= table.viewport().width(), timeout=5000)


def test_a_short_log_axis_keeps_two_labelled_ticks_off_its_ends():
    ticks = log_ticks(-1.06, 2.06, 2)          # 87 µs … 115 ms on a 75-pixel plot
    assert len(ticks) == 2 and all(-1.0 < t < 2.0 for t in ticks)


def test_the_histogram_marks_the_exact_figures_and_the_axis_ends_at_the_last_run(qtbot):
    from app.gui.widgets.live_plot import LatencyView
    from app.gui.widgets.run_form import ms_text

    view = LatencyView()
    qtbot.addWidget(view)
    samples = np.concatenate([np.full(205, 0.15), [26.0, 30.0, 36.0, 10.0, 12.0]])
    view.set_samples([0.6], samples, figures={"p50": 0.1503, "p99": 26.15})
    assert view.markers["p99"].label.format == f"p99 {ms_text(26.15)}"
    assert view.markers["p50"].label.format == f"p50 {ms_text(0.1503)}"
    low, high = view.line.getViewBox().viewRange()[0]
    assert high < 230, "211 runs: the axis ends near 211, not at 500"
    assert "measured runs" in view.legend.text() and view.line.getPlotItem().legend is None
