"""The window on a 1024×700 screen: it opens within the screen, every tab is reachable, every
tab's main action is in view without scrolling, and tables keep their key column in view."""

from operator import attrgetter

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QScreen

from app.core.store.settings import Settings
from app.gui.shell.tabs import PANELS
from tests.gui.steps import tab

#: each tab's main action: (tab, the panel's attribute holding it)
MAIN_ACTIONS = [("Overview", "recount_button"), ("Convert", "control.start_button"), ("Graph", "tools.fit_button"),
                ("Session", "control.start_button"), ("Benchmark", "control.start_button"), ("Compare", "control.start_button"),
                ("Drift", "control.start_button"), ("Profile", "control.start_button"), ("IO Binding", "control.start_button"), ("Generate", "control.start_button"),
                ("Tune", "control.start_button"), ("Optimize", "control.start_button"), ("Diagnose", "control.start_button")]


def small_window(qtbot, window):
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: window.tabs.width() < 800, timeout=5000)


def shown(qtbot, window, title):
    return tab(window, title)


def wholly_in_view(widget) -> bool:
    """Not cut by a scroll area or a splitter: all of it is painted."""
    return widget.isVisible() and widget.visibleRegion().boundingRect() == widget.rect()


def test_the_window_opens_within_a_small_screen(qtbot, monkeypatch):
    from app.gui.shell.main_window import MainWindow

    screen = QRect(0, 0, 1024, 700)
    monkeypatch.setattr(QScreen, "availableGeometry", lambda _self: screen)
    window = MainWindow(Settings(), probe_providers=False)
    qtbot.addWidget(window)
    try:
        assert screen.contains(window.frameGeometry())
        assert window.width() <= 1024 and window.height() <= 700
    finally:
        window.jobs.shutdown()


def test_a_window_saved_on_a_larger_screen_opens_within_a_small_one(qtbot, monkeypatch, window):
    window.resize(1500, 1000)
    window.move(300, 200)
    settings = Settings(window_geometry=__import__("base64").b64encode(bytes(window.saveGeometry())).decode())
    screen = QRect(0, 0, 1024, 700)
    monkeypatch.setattr(QScreen, "availableGeometry", lambda _self: screen)
    from app.gui.shell.main_window import MainWindow

    again = MainWindow(settings, probe_providers=False)
    qtbot.addWidget(again)
    try:
        assert screen.contains(again.frameGeometry())
    finally:
        again.jobs.shutdown()


def test_every_tab_is_in_view_at_1024_wide(qtbot, window):
    small_window(qtbot, window)
    bar = window.tabs.tabBar()
    assert [bar.tabText(i) for i in range(bar.count())] == [title for title, _, _ in PANELS]

    def fits():
        assert bar.tabRect(bar.count() - 1).right() < bar.width()     # no tab behind the scroll arrows
    qtbot.waitUntil(fits, timeout=5000)


@pytest.mark.parametrize("title, action", MAIN_ACTIONS)
def test_each_tabs_main_action_is_in_view_at_1024_by_700(qtbot, window, title, action):
    small_window(qtbot, window)
    panel = shown(qtbot, window, title)
    qtbot.waitUntil(lambda: wholly_in_view(attrgetter(action)(panel)), timeout=5000)


def test_historys_filter_and_refresh_are_in_view_at_1024_wide(qtbot, window):
    small_window(qtbot, window)
    panel = shown(qtbot, window, "History")
    for widget in (panel.text_filter, *panel.actions.values()):
        qtbot.waitUntil(lambda widget=widget: wholly_in_view(widget), timeout=5000)
    assert panel.text_filter.width() >= 120
