"""Targets › Manage Targets…: the remote machines jobs can run on (app.core.targets).

Add asks for the address, shows the host key's fingerprint for the user to confirm (the
scan is a job, in a process of its own), and saves the target; Test runs the provider probe there
and shows which providers really start on it, with the reasons; Remove forgets it and its
host key. The window's choice of target is in the Targets menu and the status bar.

The dialog's jobs end with it: closing it cancels the scan or test it started, and what
they send back after that is dropped (the window, at quit, waits for every job)."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QMessageBox, QPushButton, QSpinBox, QVBoxLayout)

from app.core.jobs.errors import UserError
from app.core.session.jobs import PROBE_PROVIDERS, ProbeParams
from app.core.targets.jobs import SCAN_HOST_KEYS, HostParams
from app.gui.widgets.table import DataTable


class AddTargetDialog(QDialog):
    """Name, address, port, key file and start command of a new target."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Add a target")
        form = QFormLayout(self)
        self.name = QLineEdit()
        self.address = QLineEdit()
        self.address.setPlaceholderText("user@host")
        self.port = QSpinBox()
        self.port.setRange(1, 65535)
        self.port.setValue(22)
        self.identity = QLineEdit()
        self.identity.setPlaceholderText("your SSH agent's keys")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        key_row = QHBoxLayout()
        key_row.addWidget(self.identity, 1)
        key_row.addWidget(browse)
        self.command = QLineEdit("ortune")
        self.command.setToolTip("How ORTune starts on that machine, e.g. /opt/venv/bin/ortune")
        for label, widget in (("Name", self.name), ("Address", self.address), ("Port", self.port)):
            form.addRow(label, widget)
        form.addRow("Key file", key_row)
        form.addRow("ORTune command", self.command)
        note = QLabel("Keys or an agent only: ORTune never asks for or stores a password. The host's key is "
                      "shown for you to confirm before the target is saved.")
        note.setWordWrap(True)
        form.addRow(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "SSH private key")
        if path:
            self.identity.setText(path)

    def target(self):
        """The target as entered, or a UserError naming what is wrong."""
        from app.core.targets.store import Target, checked, parse_address
        user, host, port = parse_address(self.address.text().strip())
        return checked(Target(name=self.name.text().strip(), host=host, user=user,
                              port=port or self.port.value(), identity=_absolute(self.identity.text().strip()),
                              command=self.command.text().strip() or "ortune"))


class TargetsDialog(QDialog):
    def __init__(self, jobs, parent=None, on_change=None):
        super().__init__(parent)
        self.jobs, self.on_change = jobs, on_change
        self.running: list = []         # the jobs this dialog started that have not ended
        running = self.running
        self.destroyed.connect(lambda *_: running.clear())    # gone with the window: nothing reaches it
        self.setWindowTitle("Targets")
        self.resize(860, 460)
        layout = QVBoxLayout(self)
        intro = QLabel("Machines that run ORTune's measuring jobs over SSH. Choose where jobs run in the "
                       "Targets menu; results measured there are stored here, naming the target.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.table = DataTable(["Name", "Address", "Key", "ORTune command"])
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.buttons = {}
        for text, slot in (("Add…", self.add), ("Test", self.test), ("Remove", self.remove)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            row.addWidget(button)
            self.buttons[text] = button
        row.addStretch()
        layout.addLayout(row)
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)   # it shows names from files
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.providers = DataTable(["Provider", "Usable there", "Why not"])
        layout.addWidget(self.providers, 1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout.addWidget(close)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._enable_actions())
        self.refresh()

    # its jobs ---------------------------------------------------------------------
    def _start(self, title: str, entry, params, on_result, on_error, target: str | None = None):
        """Start a job of this dialog's; what it sends back reaches the dialog only while it is open."""
        job = None

        def ours(callback):
            def call(value):
                if job in self.running:
                    self.running.remove(job)
                    callback(value)
            return call

        job = self.jobs.start(title, entry, params, target=target, on_result=ours(on_result),
                              on_error=ours(on_error))
        self.running.append(job)
        return job

    def done(self, result: int) -> None:
        """Closed (Close, Escape, the window's own close): its jobs are cancelled, not left running."""
        for job in self.running:
            job.cancel()
        self.running.clear()
        super().done(result)

    def _enable_actions(self) -> None:
        """Test and Remove act on the selected target: with none selected they are off."""
        chosen = self.selected() is not None
        for text in ("Test", "Remove"):
            self.buttons[text].setEnabled(chosen)
            self.buttons[text].setToolTip("" if chosen else "Select a target in the table first.")

    def refresh(self) -> None:
        from app.core.targets.store import load_targets
        try:
            self.targets = load_targets()
        except UserError as exc:
            self.targets = {}
            self.status.setText(exc.message)
        self.table.set_rows([[t.name, f"{t.address}:{t.port}", t.identity or "agent", t.command]
                             for t in self.targets.values()])
        self._enable_actions()

    def selected(self):
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        names = list(self.targets)
        row = self.table.proxy.mapToSource(rows[0]).row() if rows else -1     # the row shown, whatever the sort
        return self.targets[names[row]] if 0 <= row < len(names) else None

    # adding ------------------------------------------------------------------
    def add(self, _checked=False, dialog: AddTargetDialog | None = None) -> None:
        dialog = dialog or AddTargetDialog(self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        try:
            target = dialog.target()
        except UserError as exc:
            self.status.setText(exc.message)
            return
        self.status.setText(f"Asking {target.describe()} for its host key…")
        self._start(f"Ask {target.describe()} for its host key", SCAN_HOST_KEYS,
                    HostParams(host=target.host, port=target.port, name=target.name, user=target.user),
                    on_result=lambda found: self._confirm(target, found["lines"]),
                    on_error=lambda exc: self.status.setText(getattr(exc, "message", str(exc))))

    def _confirm(self, target, lines: list[str]) -> None:
        from app.core.targets.ssh import fingerprint, preferred_key, trust_host_keys
        from app.core.targets.store import load_targets, save_targets
        if not any(map(fingerprint, lines)):
            self.status.setText(f"{target.describe()} offered no host key ORTune can read: not added.")
            return
        key = preferred_key(lines)              # the one key shown is the one trusted, never the rest
        shown = fingerprint(key)
        answer = QMessageBox.question(self, "Confirm the host key",
                                      f"{target.describe()} offers this host key:\n\n{shown}\n\nTrust it? Check it "
                                      f"with the host's owner first.")
        if answer != QMessageBox.StandardButton.Yes:
            self.status.setText("Not added: the host key was not confirmed.")
            return
        trust_host_keys(target, [key])
        targets = load_targets()
        targets[target.name] = target
        save_targets(targets)
        self.status.setText(f"Added {target.describe()}. Test it to see its providers.")
        self.refresh()
        if self.on_change:
            self.on_change()

    # testing and removing ------------------------------------------------------
    def test(self) -> None:
        target = self.selected()
        if target is None:
            self.status.setText("Choose a target to test.")
            return
        self.status.setText(f"Connecting to {target.describe()}…")
        self.providers.set_rows([])
        self._start(f"Test target {target.name}", PROBE_PROVIDERS, ProbeParams(), target=target.name,
                    on_result=self._tested, on_error=lambda exc: self.status.setText(getattr(exc, "message", str(exc))))

    def _tested(self, info: dict) -> None:
        from app.core.session.machine import machine_text
        where = info.get("target") or {}
        self.status.setText(f"{where.get('name')}: ORTune {where.get('version')}, ONNX Runtime "
                            f"{where.get('ort_version')}; {machine_text(where.get('machine') or {})}")
        self.providers.set_rows([[p["name"], p["available"], p["reason"] or "starts and runs there"]
                                 for p in info["providers"]])

    def remove(self) -> None:
        from app.core.targets.ssh import forget_host_keys
        from app.core.targets.store import save_targets
        target = self.selected()
        if target is None:
            self.status.setText("Choose a target to remove.")
            return
        del self.targets[target.name]
        save_targets(self.targets)
        if not any(t.host == target.host and t.port == target.port for t in self.targets.values()):
            forget_host_keys(target)
        self.status.setText(f"Removed {target.describe()}.")
        self.refresh()
        if self.on_change:
            self.on_change()


def _absolute(path: str) -> str:
    """A key file's path as stored: absolute, so the target works from any folder."""
    return os.path.abspath(os.path.expanduser(path)) if path else ""
