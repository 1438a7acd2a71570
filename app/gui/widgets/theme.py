"""Light and dark: follow the system, and give plots matching colours."""

from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette


def is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    hints = app.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is not None:
        from PySide6.QtCore import Qt
        value = scheme()
        if value == Qt.ColorScheme.Dark:
            return True
        if value == Qt.ColorScheme.Light:
            return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def plot_colors() -> dict[str, QColor]:
    palette = QGuiApplication.palette()
    dark = is_dark()
    return {
        "background": palette.color(QPalette.ColorRole.Base),
        "foreground": palette.color(QPalette.ColorRole.Text),
        "accent": QColor("#4f9dde") if dark else QColor("#1f6fb2"),
        "second": QColor("#f0a04b") if dark else QColor("#d9711c"),
        "good": QColor("#5cbf6a") if dark else QColor("#2e8b3d"),
        "bad": QColor("#e0605a") if dark else QColor("#c0392b"),
        "muted": QColor("#8a8f98"),
    }


def series_colors() -> list[QColor]:
    """Distinct colours for several series (variants side by side)."""
    names = ["#1f6fb2", "#d9711c", "#2e8b3d", "#c0392b", "#7b4fb2", "#8c6d31", "#c2458f", "#4a8a8a"]
    if is_dark():
        names = ["#4f9dde", "#f0a04b", "#5cbf6a", "#e0605a", "#a77fe0", "#c9a15a", "#e47ab8", "#6fc2c2"]
    return [QColor(n) for n in names]
