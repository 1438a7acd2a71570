"""The window's choice of where measuring jobs run: the Targets menu (this machine or a
saved target, and Manage Targets…) and a status-bar label that always says which.

Choosing a target re-checks the providers there, so the Session tab shows what really
starts on the machine that will measure."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QLabel

from app.core.jobs.errors import UserError

THIS_MACHINE = "This machine"


class TargetMenu:
    def __init__(self, window):
        self.window = window
        self.menu = window.menuBar().addMenu("&Targets")
        self.label = QLabel(f"Measuring on: {THIS_MACHINE.lower()}")
        self.label.setTextFormat(Qt.TextFormat.PlainText)   # it shows names from files
        self.label.setToolTip("Where Bench, Compare, Profile, Tune, Optimize, Diagnose and IO Binding run (Targets menu)")
        window.statusBar().addPermanentWidget(self.label)
        self.menu.aboutToShow.connect(self.fill)
        self.fill()

    @property
    def current(self) -> str | None:
        return self.window.jobs.target

    def fill(self) -> None:
        from app.core.targets.store import load_targets
        self.menu.clear()
        group = QActionGroup(self.menu)
        try:
            names = list(load_targets())
        except UserError as exc:
            names = []
            self.window.log("Targets", "warning", exc.message)
        for name in [None, *names]:
            action = QAction(THIS_MACHINE if name is None else name, self.menu, checkable=True)
            action.setChecked(name == self.current)
            action.triggered.connect(lambda _checked=False, n=name: self.choose(n))
            group.addAction(action)
            self.menu.addAction(action)
        self.menu.addSeparator()
        self.menu.addAction("&Manage Targets…", self.manage)

    def choose(self, name: str | None) -> None:
        if name == self.current:
            return
        self.window.jobs.target = name
        self.label.setText(f"Measuring on: {name or THIS_MACHINE.lower()}")
        self.window.log("Targets", "info", f"measuring jobs now run on {name or 'this machine'}")
        self.window.check_providers()

    def manage(self) -> None:
        from PySide6.QtCore import Qt

        from app.gui.shell.targets_dialog import TargetsDialog
        dialog = TargetsDialog(self.window.jobs, self.window, on_change=self._changed)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def _changed(self) -> None:
        from app.core.targets.store import load_targets
        if self.current and self.current not in load_targets():
            self.choose(None)                    # the chosen target was removed
        self.fill()
