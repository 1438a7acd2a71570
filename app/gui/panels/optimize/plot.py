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
        # "transformers" at ×0.91 ran into "optimize" at ×0.93
        shown_range = 1.33 * span
        px = max(100, self.width() - AXIS_PX) if self.isVisible() else PLOT_PX    # the plot may be hidden yet
        metrics = self.plot.fontMetrics()
        previous = None
        for kind, x, y, mark in points:
            below = previous is not None and abs(y - previous[1]) < 1e-3 and not previous[2] and \
                abs(x - previous[0]) < max(NEAR * span, previous[3] / px * shown_range)
            label = pg.TextItem(kind, color=MARKS[mark][0], anchor=(0, 0 if below else 1))
            label.setPos(x, y)
            self.plot.addItem(label)
            self.labels.append(label)
            previous = (x, y, below, metrics.horizontalAdvance(kind) + 8)
        low = min(ys)
        margin = max(1e-4, (1.0 - low) * 0.15)
        self.plot.setRange(xRange=(min(xs) - 0.08 * span, max(xs) + 0.25 * span),
                           yRange=(low - margin, 1.0 + margin), padding=0)
        self.show_chart()

    def csv_table(self) -> tuple[list[str], list]:
        return ["candidate", "speedup", "lowest cosine", "mark"], self.rows
