"""Help › About names the versions of what the window runs on."""

import platform

from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QMessageBox


def test_about_names_qt_onnx_runtime_onnx_and_python(window, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda _parent, title, text: shown.append((title, text)))
    window.providers_info = {"package": "onnxruntime 1.2.3"}
    window.show_about()
    [(title, text)] = shown
    assert title == "About ORTune"
    for part in (f"Qt {qVersion()}", "ONNX Runtime: onnxruntime 1.2.3", "onnx ", f"Python {platform.python_version()}"):
        assert part in text


def test_about_names_the_log_folder(window, monkeypatch):
    from app.core.store.paths import log_dir
    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda _parent, title, text: shown.append(text))
    window.show_about()
    assert str(log_dir()) in shown[0] and "crash.log" in shown[0]
