"""The base of every chart (a pyqtgraph plot that exports PNG and its data as CSV from its
context menu) and the plain bar chart."""

from __future__ import annotations

from typing import Sequence

from PySide6.QtWidgets import QFileDialog, QVBoxLayout, QWidget

from app.gui.widgets.table import rows_to_csv


class ChartBase(QWidget):
    """A pyqtgraph plot whose context menu exports it as PNG and its data as CSV.

    Subclasses say what their data is with csv_table()."""

    def __init__(self, title: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        import pyqtgraph as pg
        from app.gui.widgets.theme import plot_colors

        self._pg = pg
        self.colors = plot_colors()
        self.plot = pg.PlotWidget()
        self.plot.setBackground(self.colors["background"])
        self.plot.setTitle(title, color=self.colors["foreground"])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        menu = self.plot.getPlotItem().getViewBox().menu
        menu.addSeparator()
        menu.addAction("Export PNG…", self.export_png)
        menu.addAction("Export data as CSV…", self.export_csv)

    def csv_table(self) -> tuple[list[str], list]:
        raise NotImplementedError

    def export_png(self, path: str | None = None) -> str | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export chart as PNG", "chart.png", "PNG images (*.png)")
        if not path:
            return None
        self.plot.grab().save(path, "PNG")
        return path

    def export_csv(self, path: str | None = None) -> str | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export chart data as CSV", "chart.csv", "CSV files (*.csv)")
        if not path:
            return None
        headers, rows = self.csv_table()
        with open(path, "w", newline="", encoding="utf-8") as handle:
            handle.write(rows_to_csv(headers, rows))
        return path


class BarChart(ChartBase):
    """A pyqtgraph bar chart (horizontal by default, so long operator names stay readable).

    Its context menu adds "Export PNG…" and "Export data as CSV…"."""

    def __init__(self, title: str = "", horizontal: bool = True, parent: QWidget | None = None):
        super().__init__(title, parent)
        self.horizontal = horizontal
        self.plot.showGrid(x=horizontal, y=not horizontal, alpha=0.25)
        self.plot.setMouseEnabled(x=not horizontal, y=horizontal)
        self.plot.setMenuEnabled(True)
        self.bars = None
        self.labels: list[str] = []
        self.values: list[float] = []
        self.value_name = "value"

    def set_bars(self, labels: Sequence[str], values: Sequence[float], value_name: str = "value",
                 brushes: Sequence | None = None) -> None:
        from app.gui.widgets.theme import plot_colors

        pg = self._pg
        self.labels, self.values, self.value_name = list(labels), [float(v) for v in values], value_name
        if self.bars is not None:
            self.plot.removeItem(self.bars)
        positions = list(range(len(self.labels)))
        colors = plot_colors()
        brush = brushes if brushes is not None else [colors["accent"]] * len(positions)
        if self.horizontal:
            self.bars = pg.BarGraphItem(x0=0, y=positions, height=0.7, width=self.values, brushes=brush, pen=None)
            axis = self.plot.getAxis("left")
            self.plot.getViewBox().invertY(True)
        else:
            self.bars = pg.BarGraphItem(x=positions, height=self.values, width=0.7, brushes=brush, pen=None)
            axis = self.plot.getAxis("bottom")
        axis.setTicks([[(i, label) for i, label in enumerate(self.labels)]])
        self.plot.addItem(self.bars)
        self.plot.autoRange()

    def csv_table(self) -> tuple[list[str], list]:
        return ["label", self.value_name], list(zip(self.labels, self.values))
