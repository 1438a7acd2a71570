"""Live latency charts: every run as a line (warm-up in its own colour), its rolling
median, and a histogram, redrawn from a timer at most 30 times a second.

Batches arrive from the job as raw nanoseconds; they are folded into a LatencySeries
at once (cheap), and the curves are handed new data only on the timer's tick."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QFileDialog, QGraphicsItem, QHBoxLayout, QLabel, QSplitter, QStackedWidget,
                               QVBoxLayout, QWidget)

import math
from collections import deque

REDRAW_MS = 33        # ≤ 30 Hz
HISTOGRAM_BINS = 120  # at most; fewer for fewer runs (bins_for)
HISTOGRAM_EVERY = 3   # the histogram redraws at 10 Hz
FOLD_SLICE = 20_000   # samples folded per GUI event


def _nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 5 × 10^k that is ≥ value."""
    if value <= 0:
        return 1.0
    base = 10.0 ** math.floor(math.log10(value))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= value)


def bins_for(runs: int) -> int:
    """Histogram bins for this many runs: about two per square root of the runs, so a few
    hundred runs make a shape instead of a comb."""
    return max(10, min(HISTOGRAM_BINS, int(2 * math.sqrt(max(runs, 1)))))


def _decades(low: float, high: float, step: float = 1.0) -> tuple[float, float]:
    """[low, high] widened to whole steps of `step` decades, as log10 values (pyqtgraph's log view)."""
    bottom = math.floor(math.log10(max(low, 1e-9)) / step) * step
    return bottom, max(math.ceil(math.log10(max(high, 1e-9)) / step) * step, bottom + step)


class LatencyView(QWidget):
    redrawn = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        import pyqtgraph as pg
        from app.core.bench.latency_series import LatencySeries
        from app.gui.widgets.axes import DurationAxis
        from app.gui.widgets.theme import plot_colors

        self._pg = pg
        self._series_type = LatencySeries
        self.series = LatencySeries()
        self.dirty = False
        colors = plot_colors()
        self.line = pg.PlotWidget(axisItems={"left": DurationAxis("left")})
        self.hist = pg.PlotWidget(axisItems={"bottom": DurationAxis("bottom")})
        for plot, title, x_label in ((self.line, "Latency of each run", "run"),
                                     (self.hist, "Latency distribution", "latency")):
            plot.setBackground(colors["background"])
            plot.setTitle(title, color=colors["foreground"])
            plot.setLabel("bottom", x_label)
            # Axes change only when the (stepped) range does: keep their rendering as a
            # pixmap instead of re-drawing their text on every frame.
            for name in ("left", "bottom"):
                plot.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # Horizontal grid lines only, on the line chart: each grid is a plot-sized layer
        # blended on every frame, and reading latency levels is what it is for.
        self.line.showGrid(x=False, y=True, alpha=0.2)
        self.line.setLabel("left", "latency")
        self.hist.setLabel("left", "runs")
        # STYLE.md: peak downsampling and clipping keep long series cheap to paint.
        self.line.setDownsampling(auto=True, mode="peak")
        self.line.setClipToView(True)
        self.runs_curve = self.line.plot(pen=pg.mkPen(colors["accent"], width=1), skipFiniteCheck=True)
        self.median_curve = self.line.plot(pen=pg.mkPen(colors["second"], width=1), skipFiniteCheck=True)
        self.warmup_curve = self.line.plot(pen=pg.mkPen(colors["bad"], width=1), symbol="o", symbolSize=4,
                                           symbolPen=None, symbolBrush=colors["bad"], skipFiniteCheck=True)
        # The legend beside the log switch, not in the plot: there it covered the line it explains.
        self.legend = QLabel("  ".join(f"<span style='color: {colors[key].name()}'>{mark}</span> {name}"
                                       for key, mark, name in (("accent", "━", "measured runs"),
                                                               ("second", "━", "rolling median"),
                                                               ("bad", "●", "first run and warm-up"))))
        # An opaque fill (the accent faded into the background) paints faster than a translucent one.
        accent, background = pg.mkColor(colors["accent"]), pg.mkColor(colors["background"])
        fill = pg.mkColor(*[(a + 2 * b) // 3 for a, b in zip(accent.getRgb()[:3], background.getRgb()[:3])])
        self.hist_curve = self.hist.plot(pen=pg.mkPen(colors["accent"], width=1), stepMode="center", fillLevel=0,
                                         brush=fill, skipFiniteCheck=True)
        self.figures: dict | None = None        # the exact figures of the runs drawn, once known
        self.markers = {}
        for key, color, height in (("p50", colors["second"], 0.92), ("p99", colors["bad"], 0.72)):
            line = pg.InfiniteLine(angle=90, pen=pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine),
                                   label=key, labelOpts={"position": height, "color": color})
            line.setVisible(False)
            self.hist.addItem(line)
            self.markers[key] = line
        for plot, export_csv in ((self.line, self.export_runs_csv), (self.hist, self.export_histogram_csv)):
            menu = plot.getPlotItem().getViewBox().menu
            menu.addSeparator()
            menu.addAction("Export PNG…", lambda p=plot: self.export_png(p))
            menu.addAction("Export data as CSV…", export_csv)
        split = QSplitter()
        split.addWidget(self.line)
        split.addWidget(self.hist)
        split.setSizes([650, 350])
        self.placeholder = QLabel("No runs yet: start a benchmark, or open a stored one.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet(f"color: {colors['muted'].name()}; background: {colors['background'].name()};")
        self.pages = QStackedWidget()
        self.pages.addWidget(self.placeholder)
        self.pages.addWidget(split)
        self._pending: deque = deque()
        self._fold_scheduled = False
        self._frames = 0
        self._ranges: dict[str, tuple] = {}
        self._user_ranged: set[str] = set()     # plots the user zoomed or panned: left alone
        for key, plot in (("line", self.line), ("hist", self.hist)):
            plot.disableAutoRange()
            plot.getViewBox().sigRangeChangedManually.connect(lambda *_args, k=key: self._user_ranged.add(k))
        self.log_scale = QCheckBox("Logarithmic latency axis")
        self.log_scale.setToolTip("Latencies are heavy-tailed: on a log axis the typical run and the outliers "
                                  "are both readable.")
        self.log_scale.toggled.connect(self._set_log)
        self.log_scale.setChecked(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        switches = QHBoxLayout()
        switches.addWidget(self.log_scale)
        switches.addStretch(1)
        switches.addWidget(self.legend)
        layout.addLayout(switches)
        layout.addWidget(self.pages, 1)
        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self.redraw)

    def _set_log(self, on: bool) -> None:
        self.line.setLogMode(x=False, y=on)
        self.hist.setLogMode(x=on, y=False)
        self._ranges.clear()
        self.dirty = True
        self.redraw(histogram=True)

    # feeding -------------------------------------------------------------------
    def reset(self, concurrency: int = 1) -> None:
        self.series = self._series_type(concurrency)
        self.figures = None
        self._pending.clear()
        self._ranges.clear()
        self._user_ranged.clear()
        self.dirty = True
        self.redraw(histogram=True)

    def add_batch(self, phase: str, ns: bytes) -> None:
        """Queue a batch; it is folded in slices between other events (see _fold)."""
        import numpy as np
        self._pending.append((phase, np.frombuffer(ns, dtype=np.int64) / 1e6))
        if not self._fold_scheduled:
            self._fold_scheduled = True
            QTimer.singleShot(0, self._fold)

    def _fold(self, limit: int | None = FOLD_SLICE) -> None:
        """Fold queued samples into the series, at most `limit` per call, so a big batch
        (a fast model sends ~100 000 runs a tenth of a second) never holds the GUI thread long."""
        self._fold_scheduled = False
        budget = limit
        while self._pending and (budget is None or budget > 0):
            phase, values = self._pending.popleft()
            if budget is not None and values.size > budget:
                self._pending.appendleft((phase, values[budget:]))
                values = values[:budget]
            if phase == "measure":
                self.series.add(values)
            else:
                self.series.add_warmup(values)
            if budget is not None:
                budget -= values.size
            self.dirty = True
        if self._pending and not self._fold_scheduled:
            self._fold_scheduled = True
            QTimer.singleShot(0, self._fold)

    def set_samples(self, warmup_ms, samples_ms, concurrency: int = 1, figures: dict | None = None) -> None:
        """Draw stored runs; `figures`: their exact latency figures (ms by percentile), for the marks."""
        self.reset(concurrency)
        self.series.add_warmup(warmup_ms)
        self.series.add(samples_ms)
        self.figures = figures
        self.dirty = True
        self.redraw(histogram=True)

    def show_figures(self, latency_ms: dict) -> None:
        """Mark p50 and p99 with the exact figures of the runs drawn (the panel's own), not with
        the histogram's estimate of them: one figure, written alike, for one fact."""
        self.figures = latency_ms
        self._mark_percentiles()

    def restore(self, series, figures: dict | None) -> None:
        """Draw again a series drawn before (a run cancelled before it measured anything)."""
        self._pending.clear()
        self.series, self.figures = series, figures
        self._ranges.clear()
        self.dirty = True
        self.redraw(histogram=True)

    def start(self) -> None:
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        self._fold(limit=None)
        self.dirty = True            # the last frame may have skipped the histogram
        self.redraw(histogram=True)

    # drawing -------------------------------------------------------------------
    def redraw(self, histogram: bool = False) -> None:
        """Hand the curves their new data; the histogram changes slowly and is redrawn
        on every HISTOGRAM_EVERY-th frame only (or when asked)."""
        if not self.dirty:
            return
        self.dirty = False
        self._frames += 1
        series = self.series
        self.runs_curve.setData(*series.envelope())
        self.median_curve.setData(*series.medians())
        self.warmup_curve.setData(*series.warmup_points())
        edges, counts = None, None
        self.pages.setCurrentIndex(1 if series.warmup.size + series.count else 0)
        if histogram or self._frames % HISTOGRAM_EVERY == 0:
            edges, counts, _ = series.histogram(max_bins=bins_for(series.count), upper=1.0)
            if counts.size:
                self.hist_curve.setData(edges, counts)
            else:
                self.hist_curve.setData([], [])
            self._mark_percentiles()
        self._follow_data(edges, counts)
        self.redrawn.emit()

    def _mark_percentiles(self) -> None:
        """Dashed p50 and p99 lines on the histogram, labelled with their value."""
        from app.gui.widgets.run_form import ms_text

        stats = self.figures or self.series.stats()
        log = self.log_scale.isChecked()
        for key, line in self.markers.items():
            value = stats.get(key)
            line.setVisible(bool(value and value > 0))
            if line.isVisible():
                line.setValue(math.log10(value) if log else value)
                line.label.setFormat(f"{key} {ms_text(value)}")

    def _follow_data(self, edges, counts) -> None:
        """Keep the data in view with ranges that change in steps (1-2-5 or whole decades).

        pyqtgraph's auto-range moves the axes on every new sample, and re-rendering
        the axes' text was most of a redraw's cost; stepped ranges keep them still."""
        series = self.series
        log = self.log_scale.isChecked()
        runs = series.warmup.size + series.count
        if runs == 0:
            return
        stats = series.stats()
        values = list(series.warmup) + [stats[k] for k in ("min", "max") if k in stats]
        low, high = min(values), max(values)
        # half decades, like the histogram: whole ones left a short plot room for one labelled tick
        line_y = _decades(low, high, 0.5) if log else (0.0, _nice_ceiling(high))
        # while runs arrive the axis grows in steps; once they are all in, it ends at the last run
        self._set_range("line", self.line, (0.0, _nice_ceiling(runs) if self.timer.isActive() else runs), line_y)
        if counts is not None and counts.size:
            # half decades: a narrow distribution is not lost in a 1 ms … 1 s axis
            hist_x = _decades(edges[0], edges[-1], 0.5) if log else (0.0, _nice_ceiling(edges[-1]))
            self._set_range("hist", self.hist, hist_x, (0.0, _nice_ceiling(counts.max())))

    def _set_range(self, key: str, plot, x_range, y_range) -> None:
        if key in self._user_ranged or self._ranges.get(key) == (x_range, y_range):
            return
        self._ranges[key] = (x_range, y_range)
        plot.setRange(xRange=x_range, yRange=y_range, padding=0.02)

    # exporting -----------------------------------------------------------------
    def export_png(self, plot, path: str | None = None) -> str | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export chart as PNG", "latency.png", "PNG images (*.png)")
        if path:
            plot.grab().save(path, "PNG")
        return path or None

    def _save_csv(self, headers, rows, name: str, path: str | None) -> str | None:
        from app.core.tables import rows_to_csv
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
        edges, counts, _ = self.series.histogram(max_bins=bins_for(self.series.count), upper=1.0)
        rows = [[float(edges[i]), float(edges[i + 1]), int(counts[i])] for i in range(counts.size)]
        return self._save_csv(["from_ms", "to_ms", "runs"], rows, "histogram.csv", path)
