"""The Optimize tab's speed-against-fidelity view: each measured candidate at its speedup over
the source (x) and its outputs' lowest cosine (y), coloured by what became of it, so another
than the answer can be picked by eye. The same points as report.html's plot (rows.plot_point)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.core.optimize.rows import plot_point
from app.gui.widgets.chart_base import ChartBase

#: mark -> (colour, size, legend text), as report.html draws them
MARKS = {"chosen": ("#2a8a2a", 12, "chosen"), "passed": ("#3366aa", 9, "passed its check"),
         "failed-check": ("#c0392b", 9, "failed its check")}
NEAR = 0.15          # points closer than this share of the x range alternate below, at least
PLOT_PX = 300        # the plot's width to reckon a name's width with, before it is shown
AXIS_PX = 70         # what the left axis and its label take of the chart's width


def label_anchor(row: int) -> float:
    """A name's vertical anchor for its row: 0 above the point, 1 below it, 2 a line higher, 3 a
    line lower, and so on (pyqtgraph's anchor: 1 puts the text's bottom at the point)."""
    return 1 + row // 2 if row % 2 == 0 else -(row // 2)


class SpeedFidelityChart(ChartBase):
    placeholder_text = ("Each candidate appears here once it is measured: its speedup over the source against its "
                        "outputs' lowest cosine.")

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Speed against fidelity", parent)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.setLabel("bottom", "speedup over the source (×)")
        self.plot.setLabel("left", "lowest output cosine")
        self.rows: list[list] = []
        self.labels: list = []        # the TextItems drawn, for tests to read

    def set_rows(self, rows: list[dict]) -> None:
        pg = self._pg
        self.plot.clear()
        points = sorted(filter(None, map(plot_point, rows)), key=lambda p: p[1])
        self.rows = [[kind, x, y, mark] for kind, x, y, mark in points]
        self.labels = []
        if not points:
            self.show_placeholder()
            return
        legend = self.plot.getPlotItem().legend or self.plot.addLegend(offset=(-10, -10))
        legend.clear()
        for mark, (colour, size, text) in MARKS.items():
            marked = [p for p in points if p[3] == mark]
            if marked:
                legend.addItem(self.plot.plot([p[1] for p in marked], [p[2] for p in marked], pen=None, symbol="o",
                                              symbolBrush=colour, symbolPen=None, symbolSize=size), text)
        xs, ys = [p[1] for p in points] + [1.0], [p[2] for p in points]
        span = (max(xs) - min(xs)) or 0.1
        self.plot.addItem(pg.InfiniteLine(pos=1.0, angle=90, pen=pg.mkPen("#999", style=pg.QtCore.Qt.DashLine)))
        # a name is as wide as its text, not a fixed share of the range: in a narrow plot
        # "transformers" at ×0.91 ran into "optimize" at ×0.93; and three names at ×1.00–×1.01
        # (source, ort, optimize) need three rows, not two
        shown_range = 1.33 * span
        px = max(100, self.width() - AXIS_PX) if self.isVisible() else PLOT_PX    # the plot may be hidden yet
        metrics = self.plot.fontMetrics()
        low = min(ys)
        margin = max(1e-4, (1.0 - low) * 0.15)
        placed: list[tuple[float, float, float, int]] = []      # (x, y, width in x units, row)
        for kind, x, y, mark in points:
            width = (metrics.horizontalAdvance(kind) + 8) / px * shown_range
            # the points come by x: a name placed already starts at or left of this one
            near = {row for qx, qy, qwidth, row in placed
                    if abs(y - qy) < 0.1 * (1.0 - low + 2 * margin) and x < qx + max(qwidth, NEAR * span)}
            row = next(r for r in range(len(placed) + 1) if r not in near)
            label = pg.TextItem(kind, color=MARKS[mark][0], anchor=(0, label_anchor(row)))
            label.setPos(x, y)
            self.plot.addItem(label)
            self.labels.append(label)
            placed.append((x, y, width, row))
        self.plot.setRange(xRange=(min(xs) - 0.08 * span, max(xs) + 0.25 * span),
                           yRange=(low - margin, 1.0 + margin), padding=0)
        self.show_chart()

    def csv_table(self) -> tuple[list[str], list]:
        return ["candidate", "speedup", "lowest cosine", "mark"], self.rows
