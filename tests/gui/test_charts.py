"""One chart style: placeholders instead of empty axes, durations that say their unit,
labels that fit, bars from zero, the biggest bars plus "other"."""

import math
import re

from PySide6.QtGui import QFont, QFontMetrics

from app.gui.widgets.axes import DurationAxis, fit_label, linear_ticks, log_ticks
from app.gui.widgets.chart_base import BarChart, top_and_other, value_texts
from app.gui.widgets.charts import GroupedBarChart, HeatMap, LineChart
from app.gui.widgets.live_plot import LatencyView

PLAIN_DURATION = re.compile(r"^\d+(\.\d+)? (ns|µs|ms|s)$")


def test_empty_charts_show_a_line_of_text_not_axes(qtbot):
    charts = [BarChart("ops"), GroupedBarChart("latency"), LineChart("sweep"), HeatMap("grid")]
    for chart in charts:
        qtbot.addWidget(chart)
        assert chart.empty and chart.placeholder.text()
    charts[0].set_bars(["Conv"], [2.0])
    assert not charts[0].empty
    charts[0].set_bars([], [])
    assert charts[0].empty
    charts[1].set_groups(["p50"], [("a", [1.0])])
    assert not charts[1].empty
    charts[2].set_lines([1, 2], [("all", [3.0, 4.0])])
    assert not charts[2].empty


def test_latency_view_waits_for_runs_before_drawing_axes(qtbot):
    view = LatencyView()
    qtbot.addWidget(view)
    assert view.pages.currentWidget() is view.placeholder
    view.set_samples([0.5], [0.2, 0.25, 0.3] * 100)
    assert view.pages.currentWidget() is not view.placeholder


def _axis_strings(axis, low, high, pixels):
    values = [v for _, level in axis.tickValues(low, high, pixels) for v in level]
    return values, axis.tickStrings(values, 1.0, 1.0)


def test_log_axis_ticks_are_plain_durations_that_do_not_pile_up(qtbot):
    axis = DurationAxis("bottom")
    axis.setLogMode(x=True)
    for low_ms, high_ms, pixels in ((0.2, 30.0, 300), (3.0, 125.0, 200), (0.004, 0.9, 500), (10.0, 14.0, 300)):
        values, strings = _axis_strings(axis, math.log10(low_ms), math.log10(high_ms), pixels)
        assert len(values) >= 2 and len(values) <= pixels // 58 + 1, strings
        assert all(PLAIN_DURATION.match(s) for s in strings), strings
        assert not any("10" in s and "·" in s for s in strings)
    _, strings = _axis_strings(axis, math.log10(0.2), math.log10(30.0), 600)
    assert "500 µs" in strings and "1 ms" in strings and "10 ms" in strings


def test_linear_duration_axis_uses_one_unit_chosen_by_size(qtbot):
    axis = DurationAxis("left")
    _, strings = _axis_strings(axis, 0.0, 0.8, 300)        # under a millisecond: µs, never "(x0.001)"
    assert strings[0] == "0" and all(s.endswith(" µs") for s in strings[1:]), strings
    _, strings = _axis_strings(axis, 0.0, 40.0, 300)
    assert all(s.endswith(" ms") for s in strings[1:]), strings


def test_tick_helpers():
    assert linear_ticks(0.0, 1.0, 6) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    ticks = log_ticks(0.0, 3.0, 3)          # 1 ms … 1 s, room for three labels: whole decades, thinned
    assert len(ticks) <= 3 and all(float(t).is_integer() for t in ticks)


def test_a_category_label_too_wide_for_its_slot_is_wrapped_and_shortened(qtbot):
    metrics = QFontMetrics(QFont())
    name = "rapidocr_cls.optimized.onnx"
    fitted = fit_label(name, 90, metrics)
    assert "\n" in fitted and all(metrics.horizontalAdvance(line) <= 90 for line in fitted.split("\n"))
    assert fit_label("a.onnx", 90, metrics) == "a.onnx"


def test_many_operator_types_become_the_top_ones_and_other(qtbot):
    labels = [f"Op{i}" for i in range(30)]
    values = [float(30 - i) for i in range(30)]
    shown, folded, keep = top_and_other(labels, values, limit=12)
    assert shown[:12] == labels[:12] and shown[12] == "other (18 types)" and keep == list(range(12))
    assert sum(folded) == sum(values)
    assert top_and_other(labels[:13], values[:13], limit=12)[0] == labels[:13]    # "other" of one: not worth it
    chart = BarChart("ops")
    qtbot.addWidget(chart)
    chart.set_bars(labels, values, "count", top=12)
    assert len(chart.labels) == 13 and chart.labels[-1].startswith("other")
    assert chart.bars.opts["brushes"][-1] == chart.colors["muted"]
    assert len(chart.csv_table()[1]) == 30              # the CSV keeps every type


def test_bars_start_at_zero_and_carry_their_values(qtbot):
    chart = BarChart("Throughput", horizontal=False)
    qtbot.addWidget(chart)
    chart.set_bars(["a.onnx", "b.onnx"], [60.2, 62.0], "runs/s")
    (_, _), (low, high) = chart.plot.getViewBox().viewRange()
    assert low == 0 and high > 62.0
    assert [t.toPlainText() for t in chart.texts] == ["60.2", "62.0"]     # one format for the bars' values
    assert [name for _, name in chart.category_axis.categories] == ["a.onnx", "b.onnx"]


def test_grouped_bars_have_a_scale_per_metric_from_zero_and_values_on_them(qtbot):
    chart = GroupedBarChart("Latency")
    qtbot.addWidget(chart)
    chart.set_groups(["p50", "p99"], [("fp32", [1.0, 40.0]), ("fp16", [0.5, 30.0])])
    assert len(chart.panels) == 2
    spans = [panel.getViewBox().viewRange()[0] for panel in chart.panels]
    assert all(low == 0 for low, _ in spans) and spans[0][1] < 2 < spans[1][1]    # p99 does not dwarf p50
    texts = [item.toPlainText().strip() for item in chart.panels[0].items if hasattr(item, "toPlainText")]
    assert sorted(texts) == ["1.00 ms", "500 µs"]          # as every time is written: three digits, its own unit
    assert "fp32" in chart.legend.text() and "fp16" in chart.legend.text()


def test_bar_values_of_a_like_size_share_a_format_and_spread_ones_take_their_own_unit():
    assert value_texts([12.9, 13.0], durations=True) == ["12.9 ms", "13.0 ms"]
    assert value_texts([274.0, 0.224], durations=True) == ["274 ms", "224 µs"]
    assert value_texts([1.0, 1.08], durations=False) == ["1.00", "1.08"]


def test_line_chart_y_starts_at_zero(qtbot):
    chart = LineChart("Throughput")
    qtbot.addWidget(chart)
    chart.set_lines([1, 2, 4], [("all", [61.5, 87.1, 98.4])])
    low, high = chart.plot.getViewBox().viewRange()[1]
    assert low == 0 and high > 98.4


def test_making_a_chart_opens_no_window(qtbot):
    from PySide6.QtWidgets import QApplication, QWidget

    host = QWidget()
    qtbot.addWidget(host)
    host.show()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is host)
    chart = BarChart("A title")              # its title label must not show as a window of its own
    qtbot.addWidget(chart)
    qtbot.wait(50)
    assert QApplication.activeWindow() is host
