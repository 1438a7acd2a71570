"""One run of a profile as a timeline: a lane per thread, each node event a bar; wheel to zoom,
drag to pan, hover for the node's name, operator type, duration and shapes.

Each lane is a single pyqtgraph BarGraphItem (it records its bars once into a QPicture and
replays that on every repaint), so a run of thousands of nodes pans smoothly."""

from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QStackedWidget, QToolTip, QVBoxLayout, QWidget

LANE_HEIGHT = 0.8
HOVER_SLACK_PX = 3      # a bar narrower than this is still found within this many pixels


class TimelineView(QWidget):
    hovered = Signal(str)      # the description under the mouse ("" when nothing)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        import pyqtgraph as pg

        from app.gui.widgets.axes import DurationAxis
        from app.gui.widgets.theme import plot_colors

        self._pg = pg
        colors = plot_colors()
        self.plot = pg.PlotWidget(axisItems={"bottom": DurationAxis("bottom")})
        self.plot.setBackground(colors["background"])
        self.plot.setMouseEnabled(x=True, y=False)
        self.plot.showGrid(x=True, y=False, alpha=0.2)
        self.plot.setLabel("bottom", "time since the run started")
        self.plot.getViewBox().invertY(True)
        self.plot.hideButtons()
        self.hover_label = QLabel(" ")
        self.hover_label.setWordWrap(True)
        self.placeholder = QLabel("No node events to show.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet(f"color: {colors['muted'].name()}; background: {colors['background'].name()};")
        self.pages = QStackedWidget()
        self.pages.addWidget(self.placeholder)
        self.pages.addWidget(self.plot)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages, 1)
        layout.addWidget(self.hover_label)
        self.items: list = []
        self.lanes: list[dict] = []          # per lane: start, end (ms, sorted), index (event ids)
        self._describe: Callable[[int], str] = lambda index: ""
        self.plot.scene().sigMouseMoved.connect(self._mouse_moved)

    def clear(self) -> None:
        for item in self.items:
            self.plot.removeItem(item)
        self.items, self.lanes = [], []
        self.hover_label.setText(" ")
        self.pages.setCurrentWidget(self.placeholder)

    def set_events(self, lane_names: Sequence[str], lane, start_ms, dur_ms, color_index,
                   describe: Callable[[int], str]) -> None:
        """Show events: lane index, start and duration (ms) and a colour number per event;
        describe(event index) gives the hover text."""
        import numpy as np

        from app.gui.widgets.theme import series_colors

        pg = self._pg
        self.clear()
        self._describe = describe
        palette = series_colors()
        brushes = [pg.mkBrush(c) for c in palette]
        pens = [pg.mkPen(c, width=0) for c in palette]   # cosmetic: a 1 µs node is still a visible line
        lane = np.asarray(lane)
        start, dur = np.asarray(start_ms, dtype=float), np.asarray(dur_ms, dtype=float)
        colour = np.asarray(color_index) % len(palette)
        for number in range(len(lane_names)):
            index = np.nonzero(lane == number)[0]
            index = index[np.argsort(start[index], kind="stable")]
            self.lanes.append({"start": start[index], "end": start[index] + dur[index], "index": index})
            if index.size == 0:
                continue
            item = pg.BarGraphItem(x0=start[index], width=dur[index], y0=number - LANE_HEIGHT / 2,
                                   height=LANE_HEIGHT, brushes=[brushes[c] for c in colour[index]],
                                   pens=[pens[c] for c in colour[index]])
            self.plot.addItem(item)
            self.items.append(item)
        self.plot.getAxis("left").setTicks([[(i, name) for i, name in enumerate(lane_names)]])
        self.pages.setCurrentWidget(self.plot if start.size else self.placeholder)
        end = float((start + dur).max()) if start.size else 1.0
        self.plot.setLimits(xMin=-0.05 * end, xMax=1.05 * end, yMin=-1, yMax=max(1, len(lane_names)))
        self.plot.setXRange(0, end, padding=0.02)
        self.plot.setYRange(-0.5, len(lane_names) - 0.5, padding=0.05)

    def event_at(self, x_ms: float, y: float, slack_ms: float = 0.0) -> int | None:
        """The event under a point of the plot (data coordinates), or None."""
        import numpy as np

        number = int(round(y))
        if not 0 <= number < len(self.lanes) or abs(y - number) > LANE_HEIGHT / 2:
            return None
        lane = self.lanes[number]
        position = int(np.searchsorted(lane["start"], x_ms, side="right")) - 1
        for candidate in (position, position + 1):
            if 0 <= candidate < lane["start"].size and \
                    lane["start"][candidate] - slack_ms <= x_ms <= lane["end"][candidate] + slack_ms:
                return int(lane["index"][candidate])
        return None

    def _mouse_moved(self, scene_pos) -> None:
        view = self.plot.getViewBox()
        if not self.lanes or not view.sceneBoundingRect().contains(scene_pos):
            return
        point = view.mapSceneToView(scene_pos)
        pixel_ms = view.viewPixelSize()[0]
        found = self.event_at(point.x(), point.y(), HOVER_SLACK_PX * pixel_ms)
        text = self._describe(found) if found is not None else ""
        self.hover_label.setText(text or " ")
        if text:
            QToolTip.showText(self.plot.mapToGlobal(self.plot.mapFromScene(scene_pos)), text, self.plot)
        else:
            QToolTip.hideText()
        self.hovered.emit(text)
