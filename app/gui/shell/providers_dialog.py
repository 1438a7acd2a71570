"""Help › Execution providers: which providers this ORT build has, which really start
here, and for each one that does not, why."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout

from app.gui.widgets.table import DataTable


def device_line(device: dict) -> str:
    """One device as the window shows it: what, whose, its ids, whether it is usable."""
    metadata = device.get("metadata", {})
    name = metadata.get("FULL_DEVICE_NAME") or metadata.get("ov_device") or ""
    usable = "usable" if device.get("available", True) else f"not usable: {device.get('reason', '')}"
    return (f"{device['type']} · {device['vendor']} · {device['vendor_id']:04x}:{device['device_id']:04x}"
            + (f" · {name}" if name else "") + f" — {usable}")


class ProvidersDialog(QDialog):
    def __init__(self, info: dict | None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Execution providers")
        self.resize(900, 420)
        layout = QVBoxLayout(self)
        self.summary = QLabel()
        self.summary.setTextFormat(Qt.TextFormat.PlainText)         # a plugin names its own providers
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.table = DataTable(["Provider", "In this build", "Usable here", "Why not"])
        layout.addWidget(self.table, 1)
        self.plugins = DataTable(["Plugin", "Version or library", "Providers", "Loaded"])
        self.plugins.setMaximumHeight(110)
        layout.addWidget(self.plugins)
        self.devices = DataTable(["Device", "Type", "Vendor", "Provider", "Usable", "Details"])
        self.devices.setMaximumHeight(140)
        layout.addWidget(self.devices)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.set_info(info)

    def set_info(self, info: dict | None) -> None:
        if info is None:
            self.summary.setText("Checking which execution providers start on this machine…")
            return
        usable = [p["short"] for p in info["providers"] if p["available"]]
        self.summary.setText(
            f"ONNX Runtime {info['ort_version']} from the package {info['package']}. "
            f"Each provider of the build was tried on a tiny model; usable here: {', '.join(usable)}.")
        self.table.set_rows([[p["name"], p["in_build"], p["available"], p["reason"]] for p in info["providers"]])
        self.plugins.set_rows([[p["package"] or p["registration"], p["version"] or p["path"], ", ".join(p["providers"]),
                                p["error"] or "yes"] for p in info.get("plugins", [])])
        self.devices.set_rows([[f"{d['vendor_id']:04x}:{d['device_id']:04x}", d["type"], d["vendor"], d["provider"],
                                d.get("available", True),
                                "; ".join(f"{k}={v}" for k, v in d.get("metadata", {}).items()) or d.get("reason", "")]
                               for d in info.get("devices", [])])
