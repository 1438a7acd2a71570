"""The Generate tab's live chart: each decode step's latency against the context it ran at,
one curve per prompt length, made once and handed new data from a timer (≤ 30 Hz) while the
generation runs; at the end each curve shows the median over the timed generations."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from app.gui.widgets.chart_base import ChartBase

REDRAW_MS = 33


class TokenLatencyChart(ChartBase):
    placeholder_text = "Per-token latency shows here as the tokens are generated."

    def __init__(self, parent: QWidget | None = None):
        from app.gui.widgets.axes import DurationAxis
        from app.gui.widgets.theme import series_colors

        super().__init__("Per-token latency as the context grows", parent, axes={"left": DurationAxis("left")})
        self.series_colors = series_colors()
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setLabel("bottom", "context (tokens)")
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.setClipToView(True)
        self.legend = self.plot.addLegend(offset=(-10, 10))
        self.curves: dict[int, object] = {}
        self.points: dict[int, tuple[list[float], list[float]]] = {}
        self.dirty: set[int] = set()
        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self._redraw)

    def clear(self) -> None:
        for curve in self.curves.values():
            self.plot.removeItem(curve)
        self.legend.clear()
        self.curves, self.points, self.dirty = {}, {}, set()
        self.timer.stop()
        self.show_placeholder()

    def _curve(self, prompt: int):
        if prompt not in self.curves:
            pen = self._pg.mkPen(self.series_colors[len(self.curves) % len(self.series_colors)], width=1)
            self.curves[prompt] = self.plot.plot([], [], pen=pen, name=f"prompt {prompt}")
            self.points[prompt] = ([], [])
        return self.curves[prompt]

    def add(self, prompt: int, repeat: int, contexts: list[int], ms: list[float]) -> None:
        """Steps of a generation as they come; a new generation of a prompt starts its curve over."""
        self._curve(prompt)
        xs, ys = self.points[prompt]
        if xs and contexts and contexts[0] <= xs[-1]:
            xs.clear()
            ys.clear()
        xs.extend(contexts)
        ys.extend(ms)
        self.dirty.add(prompt)
        if not self.timer.isActive():
            self.timer.start()

    def show_medians(self, runs: list[dict]) -> None:
        """The finished result: per prompt, the median latency at each context (on the curves
        the live run drew, where it drew them)."""
        for prompt in set(self.curves) - {run["prompt_length"] for run in runs}:
            self.plot.removeItem(self.curves.pop(prompt))
            self.legend.removeItem(f"prompt {prompt}")
            del self.points[prompt]
        for run in runs:
            self._curve(run["prompt_length"])
            pairs = run["latency_by_context"]
            self.points[run["prompt_length"]] = ([c for c, _ in pairs], [ms for _, ms in pairs])
            self.dirty.add(run["prompt_length"])
        self._redraw()
        self.timer.stop()

    def _redraw(self) -> None:
        for prompt in self.dirty:
            xs, ys = self.points[prompt]
            self.curves[prompt].setData(xs, ys, skipFiniteCheck=True)
        if self.dirty:
            self.show_chart()
        self.dirty = set()

    def csv_table(self) -> tuple[list[str], list]:
        return ["prompt", "context", "ms"], [[prompt, x, y] for prompt, (xs, ys) in self.points.items()
                                             for x, y in zip(xs, ys)]
