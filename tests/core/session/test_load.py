"""The load other processes put on the machine while something is timed: the diagnosis, a
benchmark, a profile and an IO-binding run each say when it was busy, in one sentence."""

from __future__ import annotations

import contextlib
import subprocess
import sys

from app.core.session.load import Load, LoadWatch, busy_note
from tests import models

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


def test_the_busy_sentence_names_the_cores_and_says_nothing_on_a_quiet_machine():
    busy = Load(5.0, 1.3, 0.9, 2).to_dict()
    assert busy_note(busy).startswith("the machine was busy: other programs used 1.3 of 2 logical cores")
    assert busy_note(Load(5.0, 0.1, 0.9, 2).to_dict()) == "" and busy_note(None) == ""


@contextlib.contextmanager
def _spinning():
    """Another program taking a core for as long as the block runs."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait(timeout=30)


def test_a_benchmark_a_profile_and_an_io_binding_run_timed_beside_a_spinner_say_the_machine_was_busy(tmp_path):
    from app.core.measure.runs import benchmark
    from app.core.measure.runs import RunSettings
    from app.core.iobinding.iobinding import run_iobinding
    from app.core.jobs.protocol import JobContext
    from app.core.profile.jobs import PROFILE
    from app.core.session.config import SessionConfig

    path = models.save(models.mlp(width=256, depth=4), tmp_path / "mlp.onnx")
    config = SessionConfig(intra_op_num_threads=1)
    with _spinning():
        report, _ = benchmark(str(path), config, RunSettings(duration_s=1.5))
        profile = PROFILE({"model": str(path), "out": str(tmp_path / "p.json"), "runs": 300,
                           "session": config.to_dict()}, JobContext())
        binding = run_iobinding(str(path), config, "cpu", iterations=600, warmup=1)
    for result in (report, profile, binding):
        load = result["load"]
        assert load["busy"] and load["other_cores"] >= 0.5 and load["seconds"] > 0, load
        assert load["own_cores"] < 1.5, "this process's own work is not the others'"
