"""The core must import and run without Qt: every app.core module imports with PySide6,
shiboken6 and pyqtgraph made unimportable (ORTUNE_BLOCK_QT=1, tests/qt_blocked), beside the
import contracts, which read the imports inside functions too; all of tests/core runs that way
with `ORTUNE_BLOCK_QT=1 python -m pytest -p no:pytest-qt tests/core`. These tests prove the
blocker really blocks."""

import importlib.util
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import app.core

ROOT = Path(__file__).resolve().parents[2]
BLOCKER_DIR = ROOT / "tests" / "qt_blocked"
QT = ("PySide6", "shiboken6", "pyqtgraph")

IMPORT_ALL = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')
       or m.startswith(('app.gui', 'app.cli'))]
assert not bad, bad
print('ok', len(sys.argv) - 1)
"""

# A spawned child: the blocker must reach the processes the job runner starts.
SPAWNED_CHILD = """
import multiprocessing

def try_qt(queue):
    try:
        import PySide6.QtCore
    except ModuleNotFoundError as exc:
        queue.put(str(exc))
    else:
        queue.put('imported')

if __name__ == '__main__':
    context = multiprocessing.get_context('spawn')
    queue = context.Queue()
    child = context.Process(target=try_qt, args=(queue,))
    child.start()
    print(queue.get(timeout=60))
    child.join()
"""


def run_blocked(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, ORTUNE_BLOCK_QT="1", PYTHONPATH=os.pathsep.join([str(BLOCKER_DIR), str(ROOT)]))
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_every_core_module_imports_without_qt():
    names = [m.name for m in pkgutil.walk_packages(app.core.__path__, prefix="app.core.")]
    assert len(names) >= 40
    done = run_blocked("-c", IMPORT_ALL, *names)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ok {len(names)}"


def test_blocker_really_blocks():
    for name in [*QT, "PySide6.QtCore", "app.gui.widgets.table"]:
        done = run_blocked("-c", f"import {name}")
        assert done.returncode != 0, name
        assert "ORTUNE_BLOCK_QT=1 blocks Qt" in done.stderr, (name, done.stderr)


def test_blocker_reaches_spawned_children(tmp_path):
    script = tmp_path / "spawn_child.py"  # spawn re-imports the parent's main module: a file, not -c
    script.write_text(SPAWNED_CHILD)
    done = run_blocked(str(script))
    assert done.returncode == 0, done.stderr
    assert "ORTUNE_BLOCK_QT=1 blocks Qt" in done.stdout


def test_qt_is_importable_without_the_flag():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BLOCKER_DIR), str(ROOT)]))
    env.pop("ORTUNE_BLOCK_QT", None)
    done = subprocess.run([sys.executable, "-c", "import shiboken6, PySide6.QtCore"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_this_run_blocks_qt_exactly_when_asked():
    """Under ORTUNE_BLOCK_QT=1 (CI's core run) Qt is not importable in the test process itself."""
    blocked = os.environ.get("ORTUNE_BLOCK_QT") == "1"
    for name in QT:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        assert found is not blocked, name
    assert not blocked or not any(m.partition(".")[0] in QT for m in sys.modules)
