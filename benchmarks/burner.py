"""A second process burning one core in spells (`spell` seconds on, as many off), for the
truth benchmarks that check a measurement on a busy machine."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys

SOURCE = """
import time
while True:
    end = time.monotonic() + {spell}
    while time.monotonic() < end:
        pass
    time.sleep({spell})
"""


@contextlib.contextmanager
def burning(spell: float):
    """The burner, running while the block runs (ended when it leaves, and on SIGTERM)."""
    process = subprocess.Popen([sys.executable, "-c", SOURCE.format(spell=spell)])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        yield process
    finally:
        process.kill()
        process.wait()
