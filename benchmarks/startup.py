"""Time from process start to the main window painted, against a bare PySide6 window.

Both are started as whole processes, alternately, several times; each prints the
wall-clock time of its first paint, and the launcher subtracts the time it started
the process. Prints one JSON object: medians in ms and "ratio" (goal: <= 1.5).

    python benchmarks/startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BARE = """
import os, sys, time
from PySide6.QtCore import QObject, QEvent
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(sys.argv[:1])
window = QMainWindow()
window.setWindowTitle("bare")
window.resize(1280, 820)
class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            print(f"painted {time.time():.6f}", flush=True)
            os._exit(0)
        return False
probe = FirstPaint()
window.installEventFilter(probe)
window.show()
app.exec()
"""


def measure(command: list[str], env: dict) -> float:
    started = time.time()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    for line in done.stdout.splitlines():
        if line.startswith("painted "):
            return (float(line.split()[1]) - started) * 1000
    raise RuntimeError(f"no paint reported: {done.stderr[-500:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = dict(os.environ, ORTUNE_STARTUP_PROBE="1", PYTHONPATH=str(ROOT))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory() as folder:
        env["ORTUNE_CONFIG_DIR"] = os.path.join(folder, "config")
        env["ORTUNE_DATA_DIR"] = os.path.join(folder, "data")
        ortune = [sys.executable, "-m", "app", "gui"]
        bare = [sys.executable, "-c", BARE]
        measure(ortune, env), measure(bare, env)           # warm the file cache for both
        app_ms, bare_ms = [], []
        for _ in range(args.runs):
            app_ms.append(measure(ortune, env))
            bare_ms.append(measure(bare, env))
    result = {
        "benchmark": "startup",
        "platform": env["QT_QPA_PLATFORM"],
        "runs": args.runs,
        "ortune_ms": round(statistics.median(app_ms), 1),
        "bare_pyside6_ms": round(statistics.median(bare_ms), 1),
        "ortune_all_ms": [round(v, 1) for v in app_ms],
        "bare_all_ms": [round(v, 1) for v in bare_ms],
    }
    result["ratio"] = round(result["ortune_ms"] / result["bare_pyside6_ms"], 3)
    result["goal"] = "ratio <= 1.5"
    result["met"] = result["ratio"] <= 1.5
    print(json.dumps(result))


if __name__ == "__main__":
    main()
