"""Make Qt unimportable in every Python process started with this folder on PYTHONPATH and
ORTUNE_BLOCK_QT=1: the test run itself (tests/conftest.py loads this file) and the CLI and job
children it starts, so the core is shown to work, and to run its jobs, without PySide6."""

from __future__ import annotations

import importlib.abc
import os
import sys

BLOCKED = ("PySide6", "shiboken6", "pyqtgraph")


class QtBlocker(importlib.abc.MetaPathFinder):
    """Refuses the Qt packages before any other finder can find them."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (ORTUNE_BLOCK_QT=1 blocks Qt)", name=name)
        return None


def install() -> None:
    # By name: tests/conftest.py loads this file under another module name than sitecustomize.
    if any(type(finder).__name__ == QtBlocker.__name__ for finder in sys.meta_path):
        return
    early = sorted(name for name in sys.modules if name.partition(".")[0] in BLOCKED)
    if early:
        raise RuntimeError(f"Qt was imported before it could be blocked: {', '.join(early)}")
    sys.meta_path.insert(0, QtBlocker())


if os.environ.get("ORTUNE_BLOCK_QT") == "1":
    install()
