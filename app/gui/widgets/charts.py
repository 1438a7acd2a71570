"""Charts with several series: grouped bars (Compare), lines and a heat map (Sweep).

Like chart_base.BarChart, each exports PNG and its data as CSV from its context menu."""

from __future__ import annotations

import math
from typing import Sequence

from PySide6.QtWidgets import QWidget

from app.gui.widgets.chart_base import ChartBase


class _Chart(ChartBase):
    headers: list[str] = []

    def __init__(self, title: str = "", parent: QWidget | None = None):
        super().__init__(title, parent)
        from app.gui.widgets.theme import series_colors

        self.series_colors = series_colors()
        for name in ("left", "bottom"):
            self.plot.getAxis(name).enableAutoSIPrefix(False)     # "ms", never "ms (x0.001)"
        self.rows: list[list] = []

    def set_title(self, title: str) -> None:
        self.plot.setTitle(title, color=self.colors["foreground"])

    def _legend(self):
        legend = self.plot.getPlotItem().legend
        if legend is None:
            brush = self._pg.mkColor(self.colors["background"])
            brush.setAlpha(200)
            legend = self.plot.addLegend(offset=(-10, 10), brush=brush)
        legend.clear()
        return legend

    def csv_table(self) -> tuple[list[str], list]:
        return self.headers, self.rows


class GroupedBarChart(_Chart):
    """Categories along x (p50, p90 …), one coloured bar per series (model) in each."""

    headers = ["category", "series", "value"]

    def set_groups(self, categories: Sequence[str], series: Sequence[tuple[str, Sequence[float]]],
                   y_label: str = "") -> None:
        pg = self._pg
        self.plot.clear()
        legend = self._legend()
        count = max(1, len(series))
        width = 0.8 / count
        self.rows = []
        for index, (name, values) in enumerate(series):
            color = self.series_colors[index % len(self.series_colors)]
            x = [c - 0.4 + width * (index + 0.5) for c in range(len(categories))]
            bars = pg.BarGraphItem(x=x, height=list(values), width=width * 0.9, brush=color, pen=None)
            self.plot.addItem(bars)
            legend.addItem(bars, name)
            self.rows += [[cat, name, float(v)] for cat, v in zip(categories, values)]
        self.plot.getAxis("bottom").setTicks([[(i, c) for i, c in enumerate(categories)]])
        self.plot.setLabel("left", y_label)
        self.plot.autoRange()


class LineChart(_Chart):
    """One line per series over shared x values (e.g. batch sizes), log-scaled x when it spans ×8 or more."""

    headers = ["x", "series", "value"]

    def set_lines(self, x_values: Sequence[float], series: Sequence[tuple[str, Sequence[float]]],
                  x_label: str = "", y_label: str = "") -> None:
        pg = self._pg
        self.plot.clear()
        legend = self._legend()
        positive = [x for x in x_values if x and x > 0]
        log_x = len(positive) == len(x_values) and len(positive) > 1 and max(positive) / min(positive) >= 8
        self.plot.setLogMode(x=log_x, y=False)
        self.rows = []
        for index, (name, values) in enumerate(series):
            color = self.series_colors[index % len(self.series_colors)]
            curve = self.plot.plot(list(x_values), list(values), pen=pg.mkPen(color, width=2), symbol="o",
                                   symbolBrush=color, symbolPen=None, symbolSize=7)
            legend.addItem(curve, name)
            self.rows += [[x, name, float(v)] for x, v in zip(x_values, values)]
        self.plot.getAxis("bottom").setTicks(
            [[(math.log10(x) if log_x else x, str(x)) for x in x_values]])
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", y_label)
        self.plot.autoRange()


class HeatMap(_Chart):
    """A grid of values (rows × columns) in colour, each cell labelled, one cell outlined."""

    headers = ["row", "column", "value"]

    def set_grid(self, row_labels: Sequence, column_labels: Sequence, values, highlight: tuple | None = None,
                 fmt: str = "{:,.0f}", row_title: str = "", column_title: str = "") -> None:
        import numpy as np
        pg = self._pg
        self.plot.clear()
        data = np.asarray(values, dtype=np.float64).reshape(len(row_labels), len(column_labels))
        image = pg.ImageItem(data.T)     # ImageItem's first axis is x: columns run along x
        finite = data[np.isfinite(data)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        levels = (low, high if high > low else low + 1.0)
        image.setLookupTable(pg.colormap.get("viridis").getLookupTable(nPts=256))
        image.setLevels(levels)
        self.plot.addItem(image)
        self.rows = []
        for r, row in enumerate(row_labels):
            for c, column in enumerate(column_labels):
                value = data[r, c]
                self.rows.append([row, column, float(value)])
                dark_cell = np.isfinite(value) and (value - levels[0]) / (levels[1] - levels[0]) < 0.6
                text = pg.TextItem(fmt.format(value) if np.isfinite(value) else "–", anchor=(0.5, 0.5),
                                   color="w" if dark_cell else "k")
                text.setPos(c + 0.5, r + 0.5)
                self.plot.addItem(text)
        if highlight is not None:
            r, c = highlight
            box = pg.QtWidgets.QGraphicsRectItem(c + 0.03, r + 0.03, 0.94, 0.94)
            box.setPen(pg.mkPen(self.colors["bad"], width=4))
            self.plot.addItem(box)
        self.plot.getAxis("bottom").setTicks([[(c + 0.5, str(v)) for c, v in enumerate(column_labels)]])
        self.plot.getAxis("left").setTicks([[(r + 0.5, str(v)) for r, v in enumerate(row_labels)]])
        self.plot.setLabel("bottom", column_title)
        self.plot.setLabel("left", row_title)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.autoRange()
