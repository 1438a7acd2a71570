"""Live latency charts: every run as a line (warm-up in its own colour), its rolling
median, and a histogram, redrawn from a timer at most 30 times a second.

Batches arrive from the job as raw nanoseconds; they are folded into a LatencySeries
at once (cheap), and the curves are handed new data only on the timer's tick."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QFileDialog, QSplitter, QVBoxLayout, QWidget

REDRAW_MS = 33        # ≤ 30 Hz
HISTOGRAM_BINS = 120


class LatencyView(QWidget):
    redrawn = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        import pyqtgraph as pg
        from app.core.latency_series import LatencySeries
        from app.gui.theme import plot_colors

        self._pg = pg
        self._series_type = LatencySeries
        self.series = LatencySeries()
        self.dirty = False
        colors = plot_colors()
        self._title_color = colors["foreground"]
        self.line = pg.PlotWidget()
        self.hist = pg.PlotWidget()
        for plot, title, x_label in ((self.line, "Latency of each run", "run"),
                                     (self.hist, "Latency distribution", "latency (ms)")):
            plot.setBackground(colors["background"])
            plot.setTitle(title, color=colors["foreground"])
            plot.setLabel("bottom", x_label)
            plot.showGrid(x=True, y=True, alpha=0.2)
        self.line.setLabel("left", "latency (ms)")
        self.hist.setLabel("left", "runs")
        # STYLE.md: peak downsampling and clipping keep long series cheap to paint.
        self.line.setDownsampling(auto=True, mode="peak")
        self.line.setClipToView(True)
        legend_brush = pg.mkColor(colors["background"])
        legend_brush.setAlpha(200)
        self.line.addLegend(offset=(-10, 10), brush=legend_brush)
        self.runs_curve = self.line.plot(pen=pg.mkPen(colors["accent"], width=1), skipFiniteCheck=True,
                                         name="measured runs")
        self.median_curve = self.line.plot(pen=pg.mkPen(colors["second"], width=2), skipFiniteCheck=True,
                                           name="rolling median")
        self.warmup_curve = self.line.plot(pen=pg.mkPen(colors["bad"], width=1), symbol="o", symbolSize=4,
                                           symbolPen=None, symbolBrush=colors["bad"], skipFiniteCheck=True,
                                           name="first run and warm-up")
        fill = pg.mkColor(colors["accent"])
        fill.setAlpha(110)
        self.hist_curve = self.hist.plot(pen=pg.mkPen(colors["accent"], width=1), stepMode="center", fillLevel=0,
                                         brush=fill, skipFiniteCheck=True)
        for plot, export_csv in ((self.line, self.export_runs_csv), (self.hist, self.export_histogram_csv)):
            menu = plot.getPlotItem().getViewBox().menu
            menu.addSeparator()
            menu.addAction("Export PNG…", lambda p=plot: self.export_png(p))
            menu.addAction("Export data as CSV…", export_csv)
        split = QSplitter()
        split.addWidget(self.line)
        split.addWidget(self.hist)
        split.setSizes([650, 350])
        self.log_scale = QCheckBox("Logarithmic latency axis")
        self.log_scale.setToolTip("Latencies are heavy-tailed: on a log axis the typical run and the outliers "
                                  "are both readable.")
        self.log_scale.toggled.connect(self._set_log)
        self.log_scale.setChecked(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.log_scale)
        layout.addWidget(split, 1)
        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self.redraw)

    def _set_log(self, on: bool) -> None:
        self.line.setLogMode(x=False, y=on)
        self.hist.setLogMode(x=on, y=False)

    # feeding -------------------------------------------------------------------
    def reset(self, concurrency: int = 1) -> None:
        self.series = self._series_type(concurrency)
        self.dirty = True
        self.redraw()

    def add_batch(self, phase: str, ns: bytes) -> None:
        import numpy as np
        values = np.frombuffer(ns, dtype=np.int64) / 1e6
        if phase == "measure":
            self.series.add(values)
        else:
            self.series.add_warmup(values)
        self.dirty = True

    def set_samples(self, warmup_ms, samples_ms, concurrency: int = 1) -> None:
        self.series = self._series_type(concurrency)
        self.series.add_warmup(warmup_ms)
        self.series.add(samples_ms)
        self.dirty = True
        self.redraw()

    def start(self) -> None:
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        self.redraw()

    # drawing -------------------------------------------------------------------
    def redraw(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        series = self.series
        self.runs_curve.setData(*series.envelope())
        self.median_curve.setData(*series.medians())
        self.warmup_curve.setData(*series.warmup_points())
        edges, counts, hidden = series.histogram(max_bins=HISTOGRAM_BINS, upper=1.0)
        if counts.size:
            self.hist_curve.setData(edges, counts)
        else:
            self.hist_curve.setData([], [])
        title = "Latency distribution"
        if hidden:
            title += f" ({hidden:,} slowest runs beyond {edges[-1]:.4g} ms not shown)"
        self.hist.setTitle(title, color=self._title_color)
        self.redrawn.emit()

    # exporting -----------------------------------------------------------------
    def export_png(self, plot, path: str | None = None) -> str | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export chart as PNG", "latency.png", "PNG images (*.png)")
        if path:
            plot.grab().save(path, "PNG")
        return path or None

    def _save_csv(self, headers, rows, name: str, path: str | None) -> str | None:
        from app.gui.widgets import rows_to_csv
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export chart data as CSV", name, "CSV files (*.csv)")
        if not path:
            return None
        with open(path, "w", newline="", encoding="utf-8") as handle:
            handle.write(rows_to_csv(headers, rows))
        return path

    def export_runs_csv(self, path: str | None = None) -> str | None:
        warm = [["warm-up", i, float(v)] for i, v in enumerate(self.series.warmup)]
        runs = [["measured", i, float(v)] for i, v in enumerate(self.series.samples())]
        return self._save_csv(["phase", "run", "latency_ms"], warm + runs, "latency.csv", path)

    def export_histogram_csv(self, path: str | None = None) -> str | None:
        edges, counts, _ = self.series.histogram(max_bins=HISTOGRAM_BINS, upper=1.0)
        rows = [[float(edges[i]), float(edges[i + 1]), int(counts[i])] for i in range(counts.size)]
        return self._save_csv(["from_ms", "to_ms", "runs"], rows, "histogram.csv", path)
