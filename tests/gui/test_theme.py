"""Light and dark follow the system's colour scheme, and plots and verdicts pick matching colours."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from app.gui.widgets import theme


def window_lightness(app) -> int:
    return app.palette().color(QPalette.ColorRole.Window).lightness()


def test_a_dark_system_gets_a_dark_palette_and_a_light_one_gets_it_back(qtbot, monkeypatch):
    app = QApplication.instance()
    assert window_lightness(app) > 128                      # the offscreen platform's own palette is light
    light_verdict = theme.verdict_color(False)
    monkeypatch.setattr(theme, "system_scheme", lambda: Qt.ColorScheme.Dark)
    theme.apply_system_scheme(app)
    try:
        assert window_lightness(app) < 128 and theme.is_dark()
        assert theme.plot_colors()["background"].lightness() < 128
        assert theme.verdict_color(False) != light_verdict
    finally:
        monkeypatch.setattr(theme, "system_scheme", lambda: Qt.ColorScheme.Light)
        theme.apply_system_scheme(app)
    assert window_lightness(app) > 128 and not theme.is_dark()
    assert theme.verdict_color(False) == light_verdict


def test_an_unknown_scheme_leaves_the_platform_palette(qtbot, monkeypatch):
    app = QApplication.instance()
    before = app.palette().color(QPalette.ColorRole.Window)
    monkeypatch.setattr(theme, "system_scheme", lambda: Qt.ColorScheme.Unknown)
    theme.apply_system_scheme(app)
    assert app.palette().color(QPalette.ColorRole.Window) == before


def test_the_window_follows_a_dark_system_before_its_first_tab_draws_a_plot(qtbot, monkeypatch):
    from app.core.store.settings import Settings
    from app.gui.shell.main_window import MainWindow

    app = QApplication.instance()
    monkeypatch.setattr(theme, "system_scheme", lambda: Qt.ColorScheme.Dark)
    win = MainWindow(Settings(), probe_providers=False)
    qtbot.addWidget(win)
    try:
        win.show()
        qtbot.waitUntil(lambda: win.panel("Overview").built, timeout=10000)
        assert window_lightness(app) < 128
        assert win.panel("Overview").op_chart.colors["background"].lightness() < 128
    finally:
        win.jobs.shutdown()
        monkeypatch.setattr(theme, "system_scheme", lambda: Qt.ColorScheme.Light)
        theme.apply_system_scheme(app)
    assert window_lightness(app) > 128
