"""Killing the command, even with SIGKILL, leaves no job process running, and the staging
folder a killed conversion leaves is swept by the next command."""

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tests import models
from tests.cli.conftest import ROOT
from tests.core.runner.test_lifeline import computing, gone

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals as Linux sends them")


def start(tmp_path, *args, stderr=subprocess.DEVNULL):
    return subprocess.Popen([sys.executable, "-m", "app", *map(str, args)], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=stderr,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))


def descendants(command):
    return psutil.Process(command.pid).children(recursive=True)


def _helper(process) -> bool:
    """multiprocessing's resource tracker or fork server (whose forked children, the jobs,
    carry its command line too)."""
    line = " ".join(process.cmdline())
    if "resource_tracker" in line:
        return True
    return "forkserver" in line and "forkserver" not in " ".join(process.parent().cmdline())


def _forking(process, command) -> bool:
    """A child the command has forked but not yet turned into another program: for a moment
    it carries the command's own line (a fork server starting looks like this)."""
    return process.cmdline() == psutil.Process(command.pid).cmdline()


def job_processes(command, within_s=60.0):
    """The command's job process(es), once the job runs (multiprocessing's helpers, the
    resource tracker and the fork server, aside)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            jobs = [p for p in descendants(command) if not _helper(p) and not _forking(p, command)]
        except psutil.NoSuchProcess:
            jobs = []
        if jobs:
            return jobs
        time.sleep(0.1)
    raise AssertionError("the job never started")


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_no_orphan_after_the_command_is_killed(tmp_path, how):
    source = models.save(models.mlp(width=256), tmp_path / "slow.onnx")
    command = start(tmp_path, "bench", source.name, "--duration", "120")
    jobs = job_processes(command)
    assert computing(jobs[0].pid, cpu_s=3.0), "the job never got to measuring"  # past its imports
    jobs = descendants(command)       # the fork server and every child it made must end too
    command.send_signal(how)
    command.wait(10)
    try:
        assert all(gone(job.pid) for job in jobs), "a job process outlived the command"
    finally:
        for job in jobs:
            if job.is_running():
                job.kill()


def test_a_killed_conversion_is_swept_by_the_next_command(ortune, tmp_path, tmp_path_factory):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    said = tmp_path_factory.mktemp("said") / "stderr.txt"
    with said.open("w") as stderr:
        command = start(tmp_path, "convert", "int8-static", source.name, "-o", "q.onnx", "--calibration-count",
                        "1000000", stderr=stderr)
    jobs = job_processes(command)
    started = time.monotonic()
    while not list(tmp_path.glob(".q.onnx.*.partial")) and command.poll() is None and time.monotonic() - started < 300:
        time.sleep(0.1)     # a machine loaded 4x took over 120 s to start calibrating
    exited = command.poll()
    # the job first, then the command: killed, neither can clean up (killing only the command
    # lets the job see its lifeline break and tidy up as it ends, which is not what is tested here)
    for process in [*descendants(command), psutil.Process(command.pid)]:
        process.kill()
    command.wait(10)
    assert all(gone(job.pid) for job in jobs)
    assert list(tmp_path.glob(".q.onnx.*.partial")), (
        f"no staging folder to leave after {time.monotonic() - started:.0f} s; the command "
        f"{'ran on' if exited is None else f'exited {exited}'}, saying: {said.read_text()[-2000:]!r}; "
        f"the folder held {sorted(p.name for p in tmp_path.iterdir())}")
    assert ortune("inspect", source, "--json").code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.onnx"]


def test_sigterm_cancels_a_conversion_which_cleans_up_at_once(tmp_path):
    source = models.save(models.mlp(), tmp_path / "mlp.onnx")
    command = start(tmp_path, "convert", "int8-static", source.name, "-o", "q.onnx", "--calibration-count", "1000000")
    jobs = job_processes(command)
    deadline = time.monotonic() + 300      # a machine loaded 4x took over 120 s to start calibrating
    while not list(tmp_path.glob(".q.onnx.*.partial")) and command.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    command.send_signal(signal.SIGTERM)
    assert command.wait(30) == 3
    assert all(gone(job.pid) for job in jobs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlp.onnx"]
