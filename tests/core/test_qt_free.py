"""The core must import without Qt: run every app.core module with PySide6,
pyqtgraph and app.gui made unimportable."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import app.core

ROOT = Path(__file__).resolve().parents[2]

BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6') or name.startswith(('app.gui', 'app.cli')):
            raise ImportError(f'{name} is not allowed in app.core')
sys.meta_path.insert(0, Block())
import importlib
for name in sys.argv[1:]:
    importlib.import_module(name)
bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph') or m.startswith(('app.gui', 'app.cli'))]
assert not bad, bad
print('ok', len(sys.argv) - 1)
"""


def test_every_core_module_imports_without_qt():
    names = [m.name for m in pkgutil.walk_packages(app.core.__path__, prefix="app.core.")]
    assert len(names) >= 40
    done = subprocess.run([sys.executable, "-c", BLOCKER, *names], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ok {len(names)}"


def test_blocker_really_blocks():
    done = subprocess.run([sys.executable, "-c", BLOCKER, "app.gui.widgets.table"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0
