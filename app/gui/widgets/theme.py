"""Light and dark: follow the system, and give plots matching colours.

Qt 6.5+ tells the system's colour scheme (styleHints().colorScheme()), but not every
platform theme brings a dark palette with it; where the system is dark and the palette
is light, the window sets a dark palette of its own, and drops it when the system turns light."""

from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette

_own_dark_palette = False      # whether the palette in use is the one dark_palette() made


def system_scheme():
    """The system's colour scheme (Qt.ColorScheme), or None where Qt cannot tell (before 6.5)."""
    app = QGuiApplication.instance()
    scheme = getattr(app.styleHints(), "colorScheme", None) if app is not None else None
    return scheme() if scheme is not None else None


def is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    from PySide6.QtCore import Qt
    value = system_scheme()
    if value == Qt.ColorScheme.Dark:
        return True
    if value == Qt.ColorScheme.Light:
        return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def dark_palette() -> QPalette:
    palette = QPalette()
    roles = QPalette.ColorRole
    for role, name in ((roles.Window, "#2b2d31"), (roles.WindowText, "#e6e6e6"), (roles.Base, "#1f2023"),
                       (roles.AlternateBase, "#2a2c30"), (roles.ToolTipBase, "#3a3d42"),
                       (roles.ToolTipText, "#f0f0f0"), (roles.PlaceholderText, "#8a8f98"), (roles.Text, "#e6e6e6"),
                       (roles.Button, "#33363b"), (roles.ButtonText, "#e6e6e6"), (roles.BrightText, "#ff6b6b"),
                       (roles.Link, "#6cb4f0"), (roles.Highlight, "#2f6fb0"), (roles.HighlightedText, "#ffffff"),
                       (roles.Light, "#45484e"), (roles.Midlight, "#3a3d42"), (roles.Mid, "#26282b"),
                       (roles.Dark, "#18191b"), (roles.Shadow, "#000000")):
        palette.setColor(role, QColor(name))
    disabled = QPalette.ColorGroup.Disabled
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        palette.setColor(disabled, role, QColor("#7c8087"))
    palette.setColor(disabled, roles.Highlight, QColor("#4a4d52"))
    return palette


def apply_system_scheme(app) -> None:
    """Match the palette to the system's scheme (see the module's note)."""
    global _own_dark_palette
    from PySide6.QtCore import Qt
    scheme = system_scheme()
    palette_dark = app.palette().color(QPalette.ColorRole.Window).lightness() < 128
    if scheme == Qt.ColorScheme.Dark and not palette_dark:
        app.setPalette(dark_palette())
        _own_dark_palette = True
    elif scheme != Qt.ColorScheme.Dark and _own_dark_palette:
        app.setPalette(QPalette())           # back to the platform's own palette
        _own_dark_palette = False


def follow_system(app) -> None:
    """Apply the system's scheme now and whenever it changes (once per application)."""
    apply_system_scheme(app)
    if app.property("ortune_follows_scheme"):
        return
    app.setProperty("ortune_follows_scheme", True)
    changed = getattr(app.styleHints(), "colorSchemeChanged", None)
    if changed is not None:
        changed.connect(lambda _scheme: apply_system_scheme(app))


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


def verdict_color(passed: bool) -> str:
    """The colour of a pass or a failure in text (rich-text labels, table cells), as #rrggbb."""
    return plot_colors()["good" if passed else "bad"].name()


def series_colors() -> list[QColor]:
    """Distinct colours for several series (variants side by side)."""
    names = ["#1f6fb2", "#d9711c", "#2e8b3d", "#c0392b", "#7b4fb2", "#8c6d31", "#c2458f", "#4a8a8a"]
    if is_dark():
        names = ["#4f9dde", "#f0a04b", "#5cbf6a", "#e0605a", "#a77fe0", "#c9a15a", "#e47ab8", "#6fc2c2"]
    return [QColor(n) for n in names]
