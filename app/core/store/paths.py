"""Where ORTune keeps its files: settings, results history, logs, cached work (graph
layouts), bundled resources.

ORTUNE_CONFIG_DIR, ORTUNE_DATA_DIR, ORTUNE_OUTPUT_DIR and ORTUNE_CACHE_DIR override the platform folders
(tests point them at temporary folders so they never touch a user's real ones)."""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from app import APP_ID, APP_NAME
from app.core.text import printable


def config_dir() -> Path:
    override = os.environ.get("ORTUNE_CONFIG_DIR")
    if override:
        return Path(override)
    import platformdirs
    return Path(platformdirs.user_config_dir(APP_ID, appauthor=False))


def data_dir() -> Path:
    override = os.environ.get("ORTUNE_DATA_DIR")
    if override:
        return Path(override)
    import platformdirs
    return Path(platformdirs.user_data_dir(APP_ID, appauthor=False))


def output_dir() -> Path:
    """Where the window saves new variants until the user picks a folder: the user's own
    documents, never the source's folder (often a shared or read-only model store)."""
    override = os.environ.get("ORTUNE_OUTPUT_DIR")
    if override:
        return Path(override)
    import platformdirs
    return Path(platformdirs.user_documents_dir()) / APP_NAME / "variants"


def cache_dir() -> Path:
    """Work that can be made again and is kept only to save time: deleting it loses nothing."""
    override = os.environ.get("ORTUNE_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs
    return Path(platformdirs.user_cache_dir(APP_ID, appauthor=False))


def log_dir() -> Path:
    return data_dir() / "logs"


def resources_dir() -> Path:
    """The bundled resources: inside the package once installed, beside it in a checkout."""
    here = Path(__file__).resolve().parents[2]  # the app package
    candidates = [here / "resources", here.parent / "resources"]
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        candidates.insert(0, Path(frozen) / "resources")
    for candidate in candidates:
        if (candidate / "demo").is_dir():
            return candidate
    return candidates[-1]


def demo_model_path() -> Path:
    return resources_dir() / "demo" / "demo_classifier.onnx"


def write_error_log(text: str | None = None) -> Path:
    """Store a traceback in a new log file and return its path."""
    folder = log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"error-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    # a traceback quotes the names and messages it met, which came from files and peers
    path.write_text(printable(text if text is not None else traceback.format_exc(), None, lines=True),
                    encoding="utf-8")
    return path
