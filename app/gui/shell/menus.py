"""The window's menus, with the usual shortcuts."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence

from app.core.store.paths import demo_model_path


def build_menus(window):
    """File, Jobs, View and Help; returns the View menu (the docks add their toggles) and
    Open Recent (filled each time it opens)."""
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    # Shortcuts as text: the StandardKey enum alone costs ~10 ms of start-up.
    _action(window, file_menu, "&Open…", window.open_dialog, QKeySequence("Ctrl+O"))
    recent_menu = file_menu.addMenu("Open &Recent")
    recent_menu.aboutToShow.connect(lambda: _fill_recent(window, recent_menu))
    _action(window, file_menu, "Open &Demo Model", lambda: window.open_model(demo_model_path()))
    _action(window, file_menu, "&Close Model", window.close_current, QKeySequence("Ctrl+W"))
    file_menu.addSeparator()
    _action(window, file_menu, "&Quit", window.close, QKeySequence("Ctrl+Q"))
    jobs_menu = bar.addMenu("&Jobs")
    _action(window, jobs_menu, "&Cancel Focused Job", window.cancel_focused_job, QKeySequence("Esc"))
    _action(window, jobs_menu, "Cancel &All Jobs", window.jobs.cancel_all)
    view_menu = bar.addMenu("&View")
    from app.gui.shell.target_menu import TargetMenu
    window.target_menu = TargetMenu(window)          # Targets, and its status-bar label
    help_menu = bar.addMenu("&Help")
    _action(window, help_menu, "&Execution Providers…", window.show_providers)
    _action(window, help_menu, "&About ORTune", window.show_about)
    return view_menu, recent_menu


def _action(window, menu, text, slot, shortcut=None) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(shortcut)
    action.triggered.connect(slot)
    menu.addAction(action)
    return action


def _fill_recent(window, menu) -> None:
    menu.clear()
    if not window.settings.recent_files:
        menu.addAction("(none yet)").setEnabled(False)
    for path in window.settings.recent_files:
        menu.addAction(path, lambda p=path: window.open_model(p))
