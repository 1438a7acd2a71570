"""Broken models (tests/mutants.py) through inspect, bench and convert, as a user runs
them: each either works or is refused with one line and exit 2 (convert: 4 when the
variant is made but its check could not run); never an internal error, a traceback or
a hang. benchmarks/robustness.py runs many more.

The seeds are fixed so that a run tests what the last one did; a mutant worth keeping is
a new seed here, a new named case. A real process each: a broken model may crash native code."""

import pytest

from tests.mutants import mutant

ACCEPTED = {"inspect": (0, 2), "bench": (0, 2), "convert": (0, 2, 4)}
COMMANDS = {
    "inspect": ["inspect", "m.onnx", "--json"],
    "bench": ["bench", "m.onnx", "--iterations", "3", "--warmup", "1", "--no-history", "--json"],
    "convert": ["convert", "optimize", "m.onnx", "-o", "out.onnx", "--no-speed", "--json"],
}
SEEDS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_broken_model_is_refused_in_one_line_or_works(ortune, tmp_path, seed, command):
    data, how = mutant(seed)
    (tmp_path / "m.onnx").write_bytes(data)
    done = ortune(*COMMANDS[command], cwd=tmp_path, timeout=120, in_process=False)
    left = sorted(p.name for p in tmp_path.iterdir())
    errors = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("warning: ")]
    assert done.code in ACCEPTED[command], f"mutant({seed}): {how}\n{done.stderr}"
    assert "Traceback" not in done.stderr and len(errors) <= 1, f"mutant({seed}): {how}\n{done.stderr}"
    if done.code == 2:
        assert errors and errors[0].startswith("ortune: ") and left == ["m.onnx"], f"mutant({seed}): {how}"
