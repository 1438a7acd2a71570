"""The window on a small screen: it opens within the screen's available area (a 1024×700 laptop
panel, a task bar), and its tab bar shows every tab at 1024 wide instead of hiding the last
ones behind scroll arrows."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QProxyStyle, QStyle

#: the size the window opens at where the screen has room for it
PREFERRED_SIZE = QSize(1280, 820)
#: what a window manager adds around the window (title bar, borders), before it is shown and known
FRAME_ALLOWANCE = QSize(16, 40)
#: the space either side of a tab's label (Qt's default is 24 px in all): 14 tabs fit the 790 px beside the model list
TAB_SPACE = 7


def fitting_size(available: QRect) -> QSize:
    """The window's first size: PREFERRED_SIZE, or less where the screen's available area,
    frame included, is smaller."""
    return QSize(min(PREFERRED_SIZE.width(), available.width() - FRAME_ALLOWANCE.width()),
                 min(PREFERRED_SIZE.height(), available.height() - FRAME_ALLOWANCE.height()))


def fit_to_screen(window) -> None:
    """Size a window that has no saved geometry to its screen, and keep a restored one (saved
    on a larger screen) within it."""
    available = window.screen().availableGeometry()
    size = window.size() if window.settings.window_geometry else fitting_size(available)
    window.resize(size.boundedTo(fitting_size(available)))
    frame = window.frameGeometry()
    if not available.contains(frame):
        window.move(max(available.left(), min(frame.left(), available.right() - frame.width())),
                    max(available.top(), min(frame.top(), available.bottom() - frame.height())))


class CompactTabs(QProxyStyle):
    """The application's style with less space beside each tab's label."""

    def pixelMetric(self, metric, option=None, widget=None) -> int:  # noqa: N802  (Qt's naming)
        if metric == QStyle.PixelMetric.PM_TabBarTabHSpace:
            return TAB_SPACE
        return super().pixelMetric(metric, option, widget)


def compact_tabs(tabs) -> None:
    """Every tab of `tabs` within a 1024-pixel window beside the model list."""
    style = CompactTabs()
    style.setParent(tabs)          # kept alive as long as the tabs that use it
    tabs.tabBar().setStyle(style)
