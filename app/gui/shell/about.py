"""Help › About: what this is, and the versions of what it runs on."""

from __future__ import annotations


def show_about(parent, providers_info: dict | None) -> None:
    """Help › About: the versions of ORTune, Qt, ONNX Runtime, onnx and Python."""
    import importlib.metadata as metadata
    import platform

    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion
    from PySide6.QtWidgets import QMessageBox

    from html import escape

    import app
    from app.core.store.paths import log_dir

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    ort = providers_info["package"] if providers_info else "checking…"
    QMessageBox.about(parent, f"About {app.APP_NAME}",
                      f"<b>{app.APP_NAME} {app.__version__}</b><br>"
                      "A workbench for making ONNX models run fast on ONNX Runtime.<br><br>"
                      f"Qt {qVersion()} (PySide6 {pyside_version})<br>ONNX Runtime: {ort}<br>"
                      f"onnx {version('onnx')}<br>Python {platform.python_version()}<br><br>"
                      f"Logs (jobs.log, and crash.log should the window ever end in a crash): "
                      f"{escape(str(log_dir()))}")
