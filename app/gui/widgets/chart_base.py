"""The base of every chart (a pyqtgraph plot that exports PNG and its data as CSV from its
context menu, and says so in a line of text while it has nothing to show) and the bar chart.

One style for all: durations on DurationAxis (units by magnitude), category names that fit
their slot, bars that start at zero with their values written on them, and past a dozen
bars the biggest ones plus "other"."""

from __future__ import annotations

import math
from typing import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLabel, QStackedWidget, QVBoxLayout, QWidget

from app.core.formatting import duration_column, duration_text, shared_decimals, significant
from app.core.tables import rows_to_csv

#: past this many bars (and one more), the rest are summed into one "other" bar
TOP_BARS = 12
ROW_PX = 15            # a horizontal bar's least height, so its label stays readable
HEADROOM = 1.18        # room beyond the longest bar for its value


def top_and_other(labels: Sequence[str], values: Sequence[float], limit: int = TOP_BARS, kind: str = "types",
                  rank: Sequence[float] | None = None) -> tuple[list[str], list[float], list[int]]:
    """The `limit` largest (labels, values) in their given order, and the rest summed into one
    "other (N types)" bar, with the indices of those kept; unchanged when folding would hide
    fewer than two. `rank`: what "largest" goes by (default: the values), so charts of one
    table can keep the same bars."""
    labels, values = list(labels), [float(v) for v in values]
    if len(labels) <= limit + 1:
        return labels, values, list(range(len(labels)))
    score = [abs(float(r)) for r in rank] if rank is not None else [abs(v) for v in values]
    keep = sorted(sorted(range(len(values)), key=lambda i: -score[i])[:limit])
    rest = [i for i in range(len(values)) if i not in set(keep)]
    return ([labels[i] for i in keep] + [f"other ({len(rest)} {kind})"],
            [values[i] for i in keep] + [sum(values[i] for i in rest)], keep)


def value_texts(values: Sequence[float], durations: bool, decimals: int | None = None) -> list[str]:
    """The values written on a chart's bars. Durations as every tab writes a time: three
    significant digits in the unit each reads best in (12.9 ms beside 13.0 ms, 274 ms beside
    224 µs, never "56.900 ms"). Other figures of a like size (within ×100) to one number of
    decimals, spread wider to three digits. Counts (whole numbers) are written whole;
    `decimals`: that many for every value (shares of a total)."""
    if not durations and decimals is not None:
        return [f"{v:,.{decimals}f}" for v in values]
    if not durations and all(math.isfinite(v) and v == int(v) for v in values):
        return [f"{int(v):,}" for v in values]
    if durations:
        return [duration_text(v, trim=False) for v in values]
    sizes = [abs(v) for v in values if v and math.isfinite(v)]
    alike = bool(sizes) and max(sizes) / min(sizes) < 100
    if alike:
        decimals = shared_decimals(values, most=3)
        return [f"{v:,.{decimals}f}" for v in values]
    return [significant(v, 3) for v in values]


class ChartBase(QWidget):
    """A pyqtgraph plot whose context menu exports it as PNG and its data as CSV; until it has
    data it shows `placeholder` instead of empty axes. The title is a label above the plot
    that wraps, so a long title never holds the plot wider than its place.

    Subclasses say what their data is with csv_table()."""

    placeholder_text = "Nothing to show yet."

    def __init__(self, title: str = "", parent: QWidget | None = None, placeholder: str | None = None,
                 axes: dict | None = None):
        super().__init__(parent)
        import pyqtgraph as pg
        from app.gui.widgets.theme import plot_colors

        self._pg = pg
        self.colors = plot_colors()
        self.plot = pg.PlotWidget(axisItems=axes or {})
        self.plot.setBackground(self.colors["background"])
        for name in ("left", "bottom"):
            self.plot.getAxis(name).enableAutoSIPrefix(False)     # "ms", never "ms (x0.001)"
        self.canvas: QWidget = self.plot
        self.add_export_menu(self.plot.getPlotItem().getViewBox())
        self.placeholder = QLabel(placeholder or self.placeholder_text, self)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet(f"color: {self.colors['muted'].name()};")
        self.title = QLabel(self)     # a parent first: showing a parentless label opens a window
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.title.setFont(font)
        self.set_title(title)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.canvas)
        self.setAutoFillBackground(True)
        palette = self.palette()
        palette.setColor(self.backgroundRole(), self.colors["background"])
        palette.setColor(self.foregroundRole(), self.colors["foreground"])
        self.setPalette(palette)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.title)
        layout.addWidget(self.stack, 1)

    def use_canvas(self, canvas: QWidget) -> None:
        """Show `canvas` (a widget holding several plots) instead of the single plot."""
        self.stack.removeWidget(self.plot)
        self.plot.hide()
        self.canvas = canvas
        self.stack.addWidget(canvas)

    def add_export_menu(self, view_box) -> None:
        menu = view_box.menu
        menu.addSeparator()
        menu.addAction("Export PNG…", self.export_png)
        menu.addAction("Export data as CSV…", self.export_csv)

    @property
    def empty(self) -> bool:
        return self.stack.currentWidget() is self.placeholder

    def show_placeholder(self, text: str | None = None) -> None:
        if text:
            self.placeholder.setText(text)
        self.stack.setCurrentWidget(self.placeholder)

    def show_chart(self) -> None:
        self.stack.setCurrentWidget(self.canvas)

    def set_title(self, title: str) -> None:
        self.title.setText(title)
        self.title.setVisible(bool(title))

    def csv_table(self) -> tuple[list[str], list]:
        raise NotImplementedError

    def export_png(self, path: str | None = None) -> str | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export chart as PNG", "chart.png", "PNG images (*.png)")
        if not path:
            return None
        self.grab().save(path, "PNG")
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
    """Bars from zero, horizontal by default (long operator names stay readable), each with
    its value at its end; `durations`: the values are ms, on a DurationAxis."""

    placeholder_text = "No bars to show yet."

    def __init__(self, title: str = "", horizontal: bool = True, parent: QWidget | None = None,
                 durations: bool = False, placeholder: str | None = None, show_values: bool = True,
                 decimals: int | None = None, value_format=None):
        from app.gui.widgets.axes import CategoryAxis, DurationAxis

        self.category_axis = CategoryAxis("left" if horizontal else "bottom")
        value_axis = DurationAxis("bottom" if horizontal else "left") if durations else None
        axes = {"left" if horizontal else "bottom": self.category_axis}
        if value_axis is not None:
            axes["bottom" if horizontal else "left"] = value_axis
        super().__init__(title, parent, placeholder, axes)
        self.horizontal, self.durations, self.show_values = horizontal, durations, show_values
        self.decimals = decimals           # of every value written on a bar (None: by their sizes)
        self.value_format = value_format   # writes a bar's value (an app.core.formatting function), else value_texts
        self.plot.showGrid(x=horizontal, y=not horizontal, alpha=0.25)
        self.plot.setMouseEnabled(x=not horizontal, y=horizontal)
        self.plot.setMenuEnabled(True)
        self.plot.getViewBox().invertY(horizontal)
        self.bars = None
        self.texts: list = []
        self.labels: list[str] = []
        self.values: list[float] = []
        self.data: tuple[list[str], list[float]] = ([], [])
        self.value_name = "value"

    def set_bars(self, labels: Sequence[str], values: Sequence[float], value_name: str = "value",
                 brushes: Sequence | None = None, top: int | None = None, kind: str = "types",
                 rank: Sequence[float] | None = None) -> None:
        """The bars; `top`: show the `top` largest (by `rank`, default the values) and sum the
        rest into "other" (additive values only)."""
        pg = self._pg
        self.data = (list(labels), [float(v) for v in values])
        self.value_name = value_name
        everything = list(range(len(self.data[0])))
        self.labels, self.values, keep = top_and_other(*self.data, top, kind, rank) if top else (*self.data, everything)
        folded = len(keep) < len(everything)
        for item in [self.bars, *self.texts]:
            if item is not None:
                self.plot.removeItem(item)
        self.bars, self.texts = None, []
        if not self.labels:
            self.show_placeholder()
            return
        positions = list(range(len(self.labels)))
        brush = [list(brushes)[i] for i in keep] if brushes is not None else [self.colors["accent"]] * len(keep)
        if folded:
            brush.append(self.colors["muted"])
        if self.horizontal:
            self.bars = pg.BarGraphItem(x0=0, y=positions, height=0.7, width=self.values, brushes=brush, pen=None)
            self.setMinimumHeight(min(600, 70 + ROW_PX * len(positions)))
        else:
            self.bars = pg.BarGraphItem(x=positions, height=self.values, width=0.7, brushes=brush, pen=None)
        self.category_axis.set_categories(self.labels)
        self.plot.addItem(self.bars)
        if self.show_values:
            self._write_values()
        self.fit()
        self.show_chart()

    def _write_values(self) -> None:
        """Each bar's value beyond its end; a long horizontal bar has it inside its end, where
        there is room for it."""
        longest = max(abs(v) for v in self.values) or 1.0
        written_values = ([self.value_format(v) for v in self.values] if self.value_format
                          else value_texts(self.values, self.durations, self.decimals))
        for position, (value, written) in enumerate(zip(self.values, written_values)):
            inside = self.horizontal and abs(value) > 0.6 * longest
            if self.horizontal:
                anchor = (1 if (value >= 0) == inside else 0, 0.5)
            else:
                anchor = (0.5, 1 if value >= 0 else 0)
            color = self.colors["background"] if inside else self.colors["foreground"]
            text = self._pg.TextItem(f" {written} " if self.horizontal else written,
                                     color=color, anchor=anchor)
            text.setPos(*((value, position) if self.horizontal else (position, value)))
            self.plot.addItem(text)
            self.texts.append(text)

    def raise_values(self, tops: Sequence[float]) -> None:
        """Write each bar's value beyond `tops` (its whisker's end) instead of its own end, so no
        line runs through it (a vertical chart's values go above; a horizontal one's past the end)."""
        for position, (text, value, top) in enumerate(zip(self.texts, self.values, tops)):
            end = max(value, top) if value >= 0 else min(value, top)
            if self.horizontal:
                text.setAnchor((0, 0.5) if value >= 0 else (1, 0.5))
                text.setColor(self.colors["foreground"])
                text.setPos(end, position)
            else:
                text.setPos(position, end)

    def fit(self, low: float | None = None, high: float | None = None) -> None:
        """Every bar in view from zero, with room for the values (and for `low`..`high`, e.g. whiskers)."""
        low = min([0.0, *self.values, *([low] if low is not None else [])])
        high = max([0.0, *self.values, *([high] if high is not None else [])])
        span = (low * HEADROOM if low < 0 else 0.0, high * HEADROOM if high > 0 else 1.0)
        slots = (-0.5, len(self.labels) - 0.5)
        if self.horizontal:
            self.plot.setRange(xRange=span, yRange=slots, padding=0)
        else:
            self.plot.setRange(xRange=slots, yRange=span, padding=0)

    def csv_table(self) -> tuple[list[str], list]:
        return ["label", self.value_name], list(zip(*self.data))
