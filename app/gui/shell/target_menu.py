"""The window's choice of where measuring jobs run: the Targets menu (this machine, a
saved target, or a Ray cluster that Compare, Sweep, Tune and Optimize spread over, and
Manage Targets…) and a status-bar label that always says which.

Choosing a target re-checks the providers there, so the Session tab shows what really
starts on the machine that will measure."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QLabel

from app.core.jobs.errors import UserError

THIS_MACHINE = "This machine"
CLUSTER_ACTION = "Ray cluster…"
#: what a cluster takes (the entries that spread, app.core.jobs.entry.CLUSTER); the rest runs here
SPREAD = "Compare, Sweep, Tune and Optimize spread over it; the rest runs on this machine"


class TargetMenu:
    def __init__(self, window):
        self.window = window
        self.menu = window.menuBar().addMenu("&Targets")
        self.label = QLabel(f"Measuring on: {THIS_MACHINE.lower()}")
        self.label.setTextFormat(Qt.TextFormat.PlainText)   # it shows names from files
        self.label.setToolTip("Where Bench, Compare, Profile, Tune, Optimize, Diagnose and IO Binding run (Targets menu)")
        self.address = ""                  # the cluster address last asked for, offered again
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
            action.setChecked(name == self.current and not self.window.jobs.cluster)
            action.triggered.connect(lambda _checked=False, n=name: self.choose(n))
            group.addAction(action)
            self.menu.addAction(action)
        cluster = QAction(CLUSTER_ACTION, self.menu, checkable=True)
        cluster.setChecked(bool(self.window.jobs.cluster))
        cluster.setToolTip(f"Spread over the Ray cluster at an address (host:port): {SPREAD}.")
        cluster.triggered.connect(lambda _checked=False: self.ask_cluster())
        group.addAction(cluster)
        self.menu.addAction(cluster)
        self.menu.addSeparator()
        self.menu.addAction("&Manage Targets…", self.manage)

    def choose(self, name: str | None) -> None:
        if name == self.current and not self.window.jobs.cluster:
            return
        self.window.jobs.target, self.window.jobs.cluster = name, None
        self.label.setText(f"Measuring on: {name or THIS_MACHINE.lower()}")
        self.label.setToolTip("Where Bench, Compare, Profile, Tune, Optimize, Diagnose and IO Binding run (Targets menu)")
        self.window.log("Targets", "info", f"measuring jobs now run on {name or 'this machine'}")
        self.window.check_providers()

    def ask_cluster(self) -> None:
        from PySide6.QtWidgets import QInputDialog
        address, ok = QInputDialog.getText(self.window, "Ray cluster",
                                           "The Ray head's address (host:port, e.g. 192.168.1.20:6379):",
                                           text=self.window.jobs.cluster or self.address)
        if ok and address.strip():
            self.choose_cluster(address)
        else:
            self.fill()                 # the menu shows the choice that stands

    def choose_cluster(self, address: str) -> None:
        """Spread the jobs that can spread over the Ray cluster at `address`; the rest run here.
        The address is checked when a job first connects (one line in the Jobs dock if not)."""
        address = "".join(address.split())
        self.address = address
        self.window.jobs.target, self.window.jobs.cluster = None, address
        self.label.setText(f"Measuring on: Ray cluster {address}")
        self.label.setToolTip(f"The Ray cluster at {address}: {SPREAD} (Targets menu).")
        self.window.log("Targets", "info", f"the Ray cluster at {address}: {SPREAD.lower()}")
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
