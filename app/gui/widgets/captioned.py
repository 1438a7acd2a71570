"""A measurement's page: its settings in a column on the left, and on the right its results
(a table over charts, split) under the caption that says what they measured and greys them
once they are no longer current. Compare and Sweep are built from it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLayout, QScrollArea, QSplitter, QTabWidget, QVBoxLayout, QWidget

from app.gui.widgets.run_caption import RunCaption
from app.gui.widgets.run_form import SIDE_WIDTH


class CaptionedResults(QWidget):
    """`table` over the `charts` ((chart, title), …: one tab each, so each has the whole
    width) in a vertical splitter (`sizes`, px), under a RunCaption that follows them both."""

    def __init__(self, idle_text: str, table: QWidget, charts, sizes: tuple[int, int]):
        super().__init__()
        self.charts = QTabWidget()
        for chart, title in charts:
            self.charts.addTab(chart, title)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(table)
        self.splitter.addWidget(self.charts)
        self.splitter.setSizes(list(sizes))
        self.caption = RunCaption(idle_text)
        self.caption.follow(self.splitter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.splitter, 1)


def settings_beside(items: list[QWidget | QLayout], results: QWidget) -> QHBoxLayout:
    """The settings column (`items` from the top, at most SIDE_WIDTH wide, so the results get
    the rest however long a status or file name) beside `results`. A window too short for
    the column scrolls it: squeezed, its boxes were cut to half their height."""
    side = QWidget()
    column = QVBoxLayout(side)
    column.setContentsMargins(0, 0, 0, 0)
    for item in items:
        if isinstance(item, QLayout):
            column.addLayout(item)
        else:
            column.addWidget(item)
    column.addStretch()
    scroll = QScrollArea()
    scroll.setWidget(side)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    bar = scroll.verticalScrollBar().sizeHint().width()     # the column keeps its width beside the bar
    scroll.setMinimumWidth(min(SIDE_WIDTH, side.minimumSizeHint().width()) + bar)
    scroll.setMaximumWidth(SIDE_WIDTH + bar)
    row = QHBoxLayout()
    row.addWidget(scroll)
    row.addWidget(results, 1)
    return row
