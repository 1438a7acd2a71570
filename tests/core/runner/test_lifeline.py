"""A job's process dies with the process that started it, and what killed jobs leave in
staging is swept when the next job starts."""

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from app.core.runner.process import run_job
from app.core.store import leftovers
from tests.cli.conftest import ROOT
from tests.sample_jobs import ECHO

DRIVER = """
import sys
from app.core.runner.process import JobHandle
from tests.sample_jobs import GIL_HOLDER
handle = JobHandle(GIL_HOLDER).start()
for _ in handle.events():
    print(handle.pid, flush=True)
    break
sys.stdin.read()
"""


def computing(pid, cpu_s=0.2, within_s=60.0) -> bool:
    """The process has spent cpu_s more CPU time from now: it is in its job's work."""
    process, deadline = psutil.Process(pid), time.monotonic() + within_s
    start = process.cpu_times().user
    while time.monotonic() < deadline:
        if process.cpu_times().user - start >= cpu_s:
            return True
        time.sleep(0.05)
    return False


def gone(pid, within_s=5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_a_child_holding_the_interpreter_lock_dies_with_its_parent(how):
    """Its pipe watcher cannot run while native code holds the lock: only the kernel can end it."""
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    child = int(driver.stdout.readline())
    try:
        assert computing(child), "the job never got to holding the lock"
        driver.send_signal(how)
        driver.wait(10)
        assert gone(child), "the job's process outlived its parent"
    finally:
        driver.kill()
        if psutil.pid_exists(child):
            psutil.Process(child).kill()


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def _staging(folder, pid):
    stage = folder / f".out.onnx.{pid}.x1y2.partial"
    stage.mkdir()
    (stage / "out.onnx").write_bytes(b"half written")
    marker = leftovers._folder() / f"{pid}-test{pid}"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(stage))
    return stage, marker


def test_the_next_job_sweeps_the_staging_of_dead_processes_only(tmp_path):
    dead, alive = _staging(tmp_path, _dead_pid()), None
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        alive = _staging(tmp_path, sleeper.pid)
        stray = tmp_path / "kept.onnx"         # a name no job makes is never touched
        stray.write_bytes(b"mine")
        (leftovers._folder() / "12345678-foreign").write_text(str(stray))
        run_job(ECHO, {"value": 1})
        assert not dead[0].exists() and not dead[1].exists()
        assert alive[0].exists() and alive[1].exists() and stray.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
        for marker in leftovers._folder().iterdir():
            marker.unlink()


def test_noting_cleans_up_after_itself_and_never_fails(tmp_path, monkeypatch):
    with leftovers.noted(tmp_path / ".x.1.partial"):
        assert len(list(leftovers._folder().glob(f"{os.getpid()}-*"))) == 1
    assert not list(leftovers._folder().glob(f"{os.getpid()}-*"))
    (tmp_path / "data").write_text("a file")
    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    with leftovers.noted(tmp_path / ".x.1.partial"):
        pass
    assert leftovers.sweep() == []
