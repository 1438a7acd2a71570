"""The command line forks its job process on Linux; these run in a fresh interpreter, as
the command does (the test process itself has threads and ORT loaded, so it may not)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.runner.child_start import fork_is_safe

ROOT = Path(__file__).resolve().parents[3]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")


def run_script(code: str, timeout: float = 60) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_process_with_threaded_libraries_does_not_fork():
    import numpy  # noqa: F401  (loaded in this test process anyway)

    assert fork_is_safe() is False


@linux_only
@pytest.mark.parametrize("fork, shared", [(True, "True"), (False, "False")])
def test_a_forked_child_shares_what_the_parent_loaded(fork, shared):
    out = run_script(f"""
import app.cli.parser
from app.core.runner.child_start import fork_is_safe
from app.core.runner.process import JobHandle
from tests.sample_jobs import HAS_MODULE
assert fork_is_safe()
print(JobHandle(HAS_MODULE, {{"module": "app.cli.parser"}}, fork={fork}).start().wait())
""")
    assert out == shared


@linux_only
def test_a_forked_child_runs_a_job_like_a_spawned_one():
    out = run_script("""
import os
from app.core.jobs.errors import UserError
from app.core.runner.process import JobHandle
from tests.sample_jobs import COOPERATIVE, ECHO, HAS_MODULE, USER_ERROR
events = []
result = JobHandle(ECHO, {"value": 5}, fork=True).start().wait(lambda k, p: events.append(k))
assert result["echo"] == 5 and result["pid"] != os.getpid(), result
assert events.count("progress") == 3 and "log" in events, events
try:
    JobHandle(USER_ERROR, fork=True).start().wait()
except UserError as exc:
    print(exc.message)
""")
    assert out == "the value is wrong"


@linux_only
def test_a_forked_child_ends_when_its_parent_dies():
    out = run_script("""
import os
from app.core.runner.process import JobHandle
from tests.sample_jobs import COOPERATIVE
handle = JobHandle(COOPERATIVE, fork=True).start()
next(handle.events())
print(handle.pid, flush=True)
os._exit(0)
""")
    pid = int(out)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] if Path(f"/proc/{pid}").exists() else "X"
    return status != "Z"
