"""Axes every chart shares: durations that say their unit ("500 µs", "2 ms") on linear and
log scales, and category labels that fit their slot instead of vanishing.

pyqtgraph's own log axis labels minor ticks "9·10²", which pile into each other, and its
SI prefix turns a ms axis into "ms (x0.001)"; a category label wider than its slot is
dropped without a trace."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt

from app.core.formatting import duration_text, duration_unit, significant

#: mantissas of the ticks in one decade, sparsest first
LOG_STEPS = ((1,), (1, 3), (1, 2, 5), (1, 2, 3, 5, 7), (1, 2, 3, 4, 5, 6, 7, 8, 9))
#: the share of a log axis's span at either end where no tick is put
END_MARGIN = 0.03
#: room a tick label needs along the axis, in pixels
ROOM_ACROSS = 58      # bottom and top axes: the text's width
ROOM_ALONG = 30      # left and right axes: the text's height, with air (3 ticks on a 90 px plot)
#: names beside bars take at most this share of the chart's width, and never less than this
LABEL_SHARE = 0.4
LEAST_LABEL_PX = 60


def log_ticks(low: float, high: float, most: int) -> list[float]:
    """Tick values (as log10) between `low` and `high` (log10), at most `most` of them: the
    densest 1-2-5 style set that fits, thinned to whole decades when even those do not;
    inside one decade without a round tick, evenly spaced round values. Ticks keep off the very
    ends (END_MARGIN of the span), where pyqtgraph drops a label that does not fit: a short plot
    of 3 decades was left with one labelled tick."""
    low, high = sorted((low, high))
    margin = END_MARGIN * (high - low)
    low, high = low + margin, high - margin
    first, last = math.floor(low), math.ceil(high)
    best: list[float] = []
    for steps in LOG_STEPS:
        values = [math.log10(m) + d for d in range(first, last + 1) for m in steps]
        values = [v for v in values if low - 1e-9 <= v <= high + 1e-9]
        if len(values) > most:
            break
        best = values
    if not best:
        decades = [float(d) for d in range(math.ceil(low), math.floor(high) + 1)]
        step = max(1, math.ceil(len(decades) / max(1, most)))
        best = decades[::step]
    if len(best) < 2:
        best = [math.log10(v) for v in linear_ticks(10 ** low, 10 ** high, max(2, most)) if v > 0]
    return best


def linear_ticks(low: float, high: float, most: int) -> list[float]:
    """Round values (1, 2 or 5 × 10^k apart) between low and high, at most `most` of them."""
    span = high - low
    if span <= 0:
        return [low]
    for exponent in range(math.floor(math.log10(span / max(1, most))) - 1, 400):
        for mantissa in (1, 2, 5):
            step = mantissa * 10.0 ** exponent
            start = math.ceil(low / step)
            count = math.floor(high / step) - start + 1
            if count <= most:
                return [round((start + i) * step, 12) for i in range(count)]
    return [low, high]


class DurationAxis(pg.AxisItem):
    """An axis of durations held in ms. On a log scale each tick says its own unit ("500 µs",
    "1 ms", "2 ms"); on a linear scale one unit, chosen by the largest value shown, serves all."""

    def __init__(self, orientation: str = "left", **kwargs):
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)

    def _most(self, size: float) -> int:
        room = ROOM_ACROSS if self.orientation in ("top", "bottom") else ROOM_ALONG
        return max(2, int(size // room))

    def tickValues(self, minVal, maxVal, size):
        if self.logMode:
            return [(None, log_ticks(minVal, maxVal, self._most(size)))]
        return [(None, linear_ticks(minVal, maxVal, self._most(size)))]

    def tickStrings(self, values, scale, spacing):
        if self.logMode:
            return [duration_text(10 ** v, 2) for v in values]
        largest = max((abs(v) for v in values), default=0.0)
        factor, name = duration_unit(largest) if largest else (1.0, "ms")
        return [f"{significant(v / factor, 4)} {name}" if v else "0" for v in values]


class CategoryAxis(pg.AxisItem):
    """Category names along an axis, one per whole number. Below bars each is wrapped onto two
    lines and shortened with "…" to fit its slot, so none is dropped for being too wide; beside
    bars each is shortened past `label_width` pixels."""

    def __init__(self, orientation: str = "bottom", **kwargs):
        super().__init__(orientation, **kwargs)
        self.categories: list[tuple[int, str]] = []
        self.label_width = 220      # a name beside the bars (left or right axis) is shortened past this
        self._lines = 1

    def set_categories(self, names, every: int = 1) -> None:
        """Name the slots 0, 1, 2 …; `every`: name only every so many (runs numbered 1…500)."""
        self.categories = [(i, str(n)) for i, n in enumerate(names) if i % every == 0]
        self.setTicks([self.categories])

    def generateDrawSpecs(self, p):
        view = self.linkedView()
        if self.categories and view is not None and self.orientation in ("top", "bottom"):
            low, high = view.viewRange()[0]
            spacing = self.categories[1][0] - self.categories[0][0] if len(self.categories) > 1 else 1
            slot = self.width() / max(high - low, 1e-9) * spacing * 0.94
            metrics = p.fontMetrics()
            self._tickLevels = [[(i, fit_label(name, slot, metrics)) for i, name in self.categories]]
            lines = max(text.count("\n") + 1 for _, text in self._tickLevels[0])
            if lines != self._lines:     # room for a wrapped name (pyqtgraph sizes the axis for one line)
                self._lines = lines
                self.setHeight(None if lines == 1 else int(lines * metrics.lineSpacing() + 12))
        elif self.categories:
            # never more than LABEL_SHARE of the chart: a narrow chart keeps room for its bars
            whole = self.width() + (view.width() if view is not None else 0)
            width = int(min(self.label_width, max(LEAST_LABEL_PX, LABEL_SHARE * whole)))
            metrics = p.fontMetrics()
            self._tickLevels = [[(i, metrics.elidedText(name, Qt.TextElideMode.ElideMiddle, width))
                                 for i, name in self.categories]]
        return super().generateDrawSpecs(p)


def fit_label(name: str, width: float, metrics) -> str:
    """`name` in at most two lines no wider than `width` pixels: broken after a space, dot,
    dash or underscore near its middle when it is too wide, each line elided if need be."""
    if metrics.horizontalAdvance(name) <= width:
        return name
    breaks = [i + 1 for i, c in enumerate(name[:-1]) if c in " ._-[("]
    if breaks:
        cut = min(breaks, key=lambda i: abs(i - len(name) / 2))
        lines = [name[:cut].strip(), name[cut:].strip()]
    else:
        lines = [name]
    return "\n".join(metrics.elidedText(line, Qt.TextElideMode.ElideRight, int(max(width, 12))) for line in lines)
