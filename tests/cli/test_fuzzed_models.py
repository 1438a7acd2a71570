"""Broken models (tests/mutants.py) through inspect, bench and convert, as a user runs
them: each either works or is refused with one line and exit 2 (convert: 4 when the
variant is made but its check could not run); never an internal error, a traceback or
a hang. benchmarks/robustness.py runs many more."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tests.cli.conftest import ROOT
from tests.mutants import mutant

ACCEPTED = {"inspect": (0, 2), "bench": (0, 2), "convert": (0, 2, 4)}
COMMANDS = {
    "inspect": ["inspect", "m.onnx", "--json"],
    "bench": ["bench", "m.onnx", "--iterations", "3", "--warmup", "1", "--no-history", "--json"],
    "convert": ["convert", "optimize", "m.onnx", "-o", "out.onnx", "--no-speed", "--json"],
}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), command=st.sampled_from(sorted(COMMANDS)))
def test_a_broken_model_is_refused_in_one_line_or_works(seed, command):
    data, how = mutant(seed)
    note(f"mutant({seed}): {how}")
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "m.onnx").write_bytes(data)
        done = subprocess.run([sys.executable, "-m", "app", *COMMANDS[command]], cwd=folder, capture_output=True,
                              text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        left = sorted(p.name for p in Path(folder).iterdir())
    errors = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("warning: ")]
    assert done.returncode in ACCEPTED[command], done.stderr
    assert "Traceback" not in done.stderr and len(errors) <= 1, done.stderr
    if done.returncode == 2:
        assert errors and errors[0].startswith("ortune: ") and left == ["m.onnx"]
