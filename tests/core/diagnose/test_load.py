"""The load other processes put on the machine while the diagnosis measures."""

from __future__ import annotations

import subprocess
import sys

from app.core.diagnose.load import Load, LoadWatch

SPIN = "import time\nend = time.monotonic() + 3\nwhile time.monotonic() < end: pass\n"


def test_a_process_spinning_beside_the_measurement_makes_the_machine_busy():
    watch = LoadWatch()
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    spinner.wait(timeout=60)
    load = watch.stop()
    assert load.other_cores >= 0.5 and load.busy, load
    assert load.own_cores < 0.5, "waiting for the spinner costs this process nothing"


def test_busy_means_half_a_core_or_a_tenth_of_a_large_machine():
    assert not Load(5.0, 0.4, 1.0, 4).busy and Load(5.0, 0.6, 1.0, 4).busy
    assert not Load(5.0, 1.5, 1.0, 32).busy and Load(5.0, 3.3, 1.0, 32).busy
    assert Load(5.0, 0.6, 1.0, 4).to_dict()["busy"] is True
