import csv

from PySide6.QtCore import Qt

from app.gui.widgets.charts import GroupedBarChart
from app.gui.widgets.chart_base import BarChart
from app.gui.widgets.table import DataTable


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_bar_chart_exports_png_and_its_data(qtbot, tmp_path):
    chart = BarChart("ops")
    qtbot.addWidget(chart)
    chart.set_bars(["Conv", "Relu"], [3, 1], value_name="count")
    assert chart.export_csv(str(tmp_path / "c.csv"))
    assert read_csv(tmp_path / "c.csv") == [["label", "count"], ["Conv", "3.0"], ["Relu", "1.0"]]
    chart.resize(300, 200)
    assert chart.export_png(str(tmp_path / "c.png"))
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_grouped_chart_exports_its_series(qtbot, tmp_path):
    chart = GroupedBarChart("latency")
    qtbot.addWidget(chart)
    chart.set_groups(["p50", "p99"], [("fp32", [1.0, 2.0]), ("fp16", [0.5, 1.5])])
    chart.export_csv(str(tmp_path / "g.csv"))
    rows = read_csv(tmp_path / "g.csv")
    assert rows[0] == ["category", "series", "value"] and len(rows) == 5


def test_table_sorts_numbers_as_numbers_and_exports(qtbot, tmp_path):
    table = DataTable(["name", "n"])
    qtbot.addWidget(table)
    table.set_rows([["a", 10], ["b", 9], ["c", 100]])
    table.sortByColumn(1, table.horizontalHeader().sortIndicatorOrder().__class__.AscendingOrder)
    assert [r[1] for r in table.visible_rows()] == [9, 10, 100]
    table.export_csv(str(tmp_path / "t.csv"))
    assert read_csv(tmp_path / "t.csv")[1] == ["b", "9"]


def test_a_long_text_column_stops_at_a_width_and_keeps_the_text_in_its_tooltip(qtbot):
    from app.gui.widgets.table import MAX_COLUMN_PX, DataTable

    table = DataTable(["Model", "Speedup", "Verdict"])
    qtbot.addWidget(table)
    name = "rapidocr_onnxruntime__ch_ppocr_mobile_v2.0_cls_infer.onnx [int8-dynamic]" * 2
    table.set_rows([[name, 1.5, "faster"]])
    assert table.columnWidth(0) == MAX_COLUMN_PX and table.cell(0, 0, Qt.ItemDataRole.ToolTipRole) == name
    assert table.columnWidth(1) < MAX_COLUMN_PX, "short columns keep their own width"
