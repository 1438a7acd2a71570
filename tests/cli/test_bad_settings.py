"""Every wrong preset field and flag (tests/bad_settings.py) is refused with one line that
names it, exit 2 and no traceback; all but the ones only the job can see
(tests.bad_settings.READ_IN_THE_JOB) before any process starts."""

import pytest

from app.cli import bench as bench_command
from app.cli.main import build_parser
from app.core.jobs.errors import UserError
from app.core.jobs.memory import budget_bytes
from app.core.runner.process import JobHandle
from tests import models
from tests.bad_settings import BAD_FLAGS, BAD_PRESETS, BENCH_ONLY, READ_IN_THE_JOB

CASES = {**BAD_PRESETS, **BAD_FLAGS}
#: the cases issue #14 lists by name, run end to end through bench and convert
LISTED = ["providers: 5", "free_dimension_overrides: [1]", "config_entries: [1]", "enable_mem_pattern: no",
          "inputs.seed: x", "inputs.shapes: {image: 5}", "inputs: x", "100,000-deep list", "--config FIFO",
          "--threads 99999999999999999999", "--threads 1000000", "--inter-threads 1000000, parallel",
          "--vocab-size 2^70", "--dim batch=10^14"]


class JobWouldStart(Exception):
    pass


def _start_nothing(job, params, memory_limit=None, **_):
    """What run_job_cli checks before it starts the job's process, and no process."""
    handle = JobHandle(job, params)
    if handle.error is not None:
        raise handle.error
    if memory_limit:
        budget_bytes(memory_limit)
    raise JobWouldStart


@pytest.fixture
def folder(tmp_path, monkeypatch):
    models.save(models.mlp(width=16), tmp_path / "mlp.onnx")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", sorted(set(CASES) - READ_IN_THE_JOB))
def test_a_bad_setting_is_refused_before_any_process_starts(folder, monkeypatch, name):
    make, words = CASES[name]
    monkeypatch.setattr(bench_command, "run_job_cli", _start_nothing)
    argv = ["bench", "mlp.onnx", *make(folder)]
    with pytest.raises(UserError) as caught:
        args = build_parser(argv).parse_args(argv)
        args.handler(args)
    assert words in caught.value.message and "\n" not in caught.value.message
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("name", sorted(READ_IN_THE_JOB))
def test_a_setting_only_the_job_can_check_is_refused_in_one_line(ortune, folder, name):
    make, words = CASES[name]
    done = ortune("bench", "mlp.onnx", "--iterations", "3", *make(folder), cwd=folder, timeout=120)
    assert done.code == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["bench", "convert"])
@pytest.mark.parametrize("name", LISTED)
def test_the_listed_cases_end_with_exit_2_end_to_end(ortune, folder, command, name):
    make, words = CASES[name]
    assert name not in BENCH_ONLY
    head = (["bench", "mlp.onnx", "--iterations", "3"] if command == "bench"
            else ["convert", "optimize", "mlp.onnx", "-o", "out.onnx", "--no-speed"])
    done = ortune(*head, *make(folder), "--json", cwd=folder, timeout=60)
    assert done.code == 2, done.stderr
    assert done.stderr.strip().startswith("ortune: ") and len(done.stderr.strip().splitlines()) == 1
    assert words in done.stderr and done.json()["error"]["kind"]
    assert not (folder / "out.onnx").exists()
