"""Charts with several series: grouped bars (Compare), lines and a heat map (Sweep).

Like chart_base.BarChart, each exports PNG and its data as CSV from its context menu and
shows a line of text instead of empty axes until it has data."""

from __future__ import annotations

import math
from html import escape
from typing import Sequence

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.gui.widgets.chart_base import ChartBase, value_texts


class _Chart(ChartBase):
    headers: list[str] = []

    def __init__(self, title: str = "", parent: QWidget | None = None, placeholder: str | None = None,
                 axes: dict | None = None):
        super().__init__(title, parent, placeholder, axes)
        from app.gui.widgets.theme import series_colors

        self.series_colors = series_colors()
        self.rows: list[list] = []

    def color(self, index: int):
        return self.series_colors[index % len(self.series_colors)]

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
    """One small plot per category (p50, p90 …), stacked, each with its own scale from zero
    and one coloured bar per series (model) with its value written on it; the legend above
    the plots, where it covers no bar. Horizontal bars keep values readable in a narrow place."""

    headers = ["category", "series", "value"]
    placeholder_text = "No figures to compare yet."
    AXIS_WIDTH = 40

    def __init__(self, title: str = "", parent: QWidget | None = None, durations: bool = True,
                 placeholder: str | None = None):
        super().__init__(title, parent, placeholder)
        self.durations = durations
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.grid = self._pg.GraphicsLayoutWidget()
        self.grid.setBackground(self.colors["background"])
        holder = QWidget()
        layout = QVBoxLayout(holder)
        layout.setContentsMargins(6, 0, 6, 0)
        layout.addWidget(self.legend)
        layout.addWidget(self.grid, 1)
        self.use_canvas(holder)
        self.panels: list = []

    def set_groups(self, categories: Sequence[str], series: Sequence[tuple[str, Sequence[float]]],
                   y_label: str = "") -> None:
        self.grid.clear()
        self.panels, self.rows = [], []
        if not categories or not series:
            self.show_placeholder()
            return
        # each square stays with its name when the legend wraps
        self.legend.setText("   ".join(f"<span style='color:{self.color(i).name()}'>■</span>&nbsp;"
                                       + escape(name).replace(" ", "&nbsp;") for i, (name, _) in enumerate(series)))
        for row, category in enumerate(categories):
            values = [float(v[row]) for _, v in series]
            self.panels.append(self._panel(row, category, values, write=len(series) <= 4))
            self.rows += [[category, name, value] for (name, _), value in zip(series, values)]
        self.show_chart()

    def _panel(self, row: int, category: str, values: list[float], write: bool):
        pg = self._pg
        panel = self.grid.addPlot(row=row, col=0)
        panel.hideAxis("bottom")             # each bar says its value; the scale starts at the left edge, at 0
        axis = panel.getAxis("left")
        axis.setTicks([[((len(values) - 1) / 2, category)]])
        axis.setWidth(self.AXIS_WIDTH)
        panel.setMouseEnabled(x=False, y=False)
        panel.getViewBox().invertY(True)
        self.add_export_menu(panel.getViewBox())
        finite = [v for v in values if math.isfinite(v)]
        longest = max(finite or [1.0]) or 1.0
        for index, (value, written) in enumerate(zip(values, value_texts(values, self.durations))):
            panel.addItem(pg.BarGraphItem(x0=0, y=[index], height=0.8, width=[value], brush=self.color(index),
                                          pen=None))
            if write and math.isfinite(value):
                inside = value > 0.6 * longest
                text = pg.TextItem(f" {written} ", anchor=(1 if inside else 0, 0.5),
                                   color=self.colors["background"] if inside else self.colors["foreground"])
                text.setPos(value, index)
                panel.addItem(text)
        panel.setRange(xRange=(0, longest * 1.02), yRange=(-0.5, len(values) - 0.5), padding=0)
        return panel


class LineChart(_Chart):
    """One line per series over shared x values (e.g. batch sizes), log-scaled x when it spans
    ×8 or more; y from zero, so a gap within noise does not look like a cliff. `durations`:
    y is in ms, on a DurationAxis."""

    headers = ["x", "series", "value"]
    placeholder_text = "No points yet."

    def __init__(self, title: str = "", parent: QWidget | None = None, durations: bool = False,
                 placeholder: str | None = None):
        from app.gui.widgets.axes import DurationAxis

        super().__init__(title, parent, placeholder, {"left": DurationAxis("left")} if durations else None)
        self.plot.showGrid(x=False, y=True, alpha=0.25)

    def set_lines(self, x_values: Sequence[float], series: Sequence[tuple[str, Sequence[float]]],
                  x_label: str = "", y_label: str = "") -> None:
        pg = self._pg
        self.plot.clear()
        legend = self._legend()
        self.rows = []
        if not x_values or not series:
            self.show_placeholder()
            return
        positive = [x for x in x_values if x and x > 0]
        log_x = len(positive) == len(x_values) and len(positive) > 1 and max(positive) / min(positive) >= 8
        self.plot.setLogMode(x=log_x, y=False)
        top = 0.0
        for index, (name, values) in enumerate(series):
            color = self.color(index)
            curve = self.plot.plot(list(x_values), list(values), pen=pg.mkPen(color, width=2), symbol="o",
                                   symbolBrush=color, symbolPen=None, symbolSize=7)
            legend.addItem(curve, name)
            self.rows += [[x, name, float(v)] for x, v in zip(x_values, values)]
            top = max([top, *[float(v) for v in values if math.isfinite(float(v))]])
        self.plot.getAxis("bottom").setTicks(
            [[(math.log10(x) if log_x else x, str(x)) for x in x_values]])
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", y_label)
        places = [math.log10(x) if log_x else float(x) for x in x_values]
        low, high = min(places), max(places)
        margin = (high - low) * 0.06 or 0.5
        # the legend sits top right: the headroom keeps it off the highest line
        self.plot.setRange(xRange=(low - margin, high + margin), yRange=(0, top * 1.35 or 1.0), padding=0)
        self.show_chart()


class HeatMap(_Chart):
    """A grid of values (rows × columns) in colour, each cell labelled, one cell outlined."""

    headers = ["row", "column", "value"]
    placeholder_text = "No cells yet."

    def set_grid(self, row_labels: Sequence, column_labels: Sequence, values, highlight: tuple | None = None,
                 fmt: str = "{:,.0f}", row_title: str = "", column_title: str = "") -> None:
        import numpy as np
        pg = self._pg
        self.plot.clear()
        self.rows = []
        if not len(row_labels) or not len(column_labels):
            self.show_placeholder()
            return
        data = np.asarray(values, dtype=np.float64).reshape(len(row_labels), len(column_labels))
        image = pg.ImageItem(data.T)     # ImageItem's first axis is x: columns run along x
        finite = data[np.isfinite(data)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        levels = (low, high if high > low else low + 1.0)
        image.setLookupTable(pg.colormap.get("viridis").getLookupTable(nPts=256))
        image.setLevels(levels)
        self.plot.addItem(image)
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
        self.show_chart()
