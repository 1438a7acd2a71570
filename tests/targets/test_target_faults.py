"""Every way a remote run can go wrong gives one clear line, loses nothing here and leaves
nothing running there: an unreachable host, refused login, a changed host key, ORTune
missing or of another version, the connection or the remote child killed mid-run, a remote
child past its memory budget, and cancel."""

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.bench.jobs import BENCH
from app.core.jobs.errors import JobCancelled, JobFailed, UserError
from app.core.runner.failure import describe_failure
from app.core.targets import channel
from app.core.targets.handle import RemoteHandle
from app.core.targets.ssh import trust_host_keys
from app.core.targets.store import Target, get_target, load_targets, save_targets
from tests import models


@pytest.fixture
def model(tmp_path):
    return models.save(models.mlp(), tmp_path / "mlp.onnx")


def _variant(base: Target, **changes) -> str:
    targets = load_targets()
    name = changes.pop("name")
    targets[name] = Target(**{**base.__dict__, "name": name, **changes})
    save_targets(targets)
    return name


def _one_line(done) -> str:
    assert done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def test_nobody_listening(loop_target, ortune, model, sshd):
    from tests.targets.sshd import free_port
    port = free_port()
    name = _variant(get_target(loop_target), name="closed", port=port)
    trust_host_keys(get_target(name), [f"x {sshd.host_key_pub.read_text().strip()}"])
    done = ortune("bench", model, "--target", name)
    assert done.code == 2 and "refused the connection" in _one_line(done)


def test_refused_login(loop_target, ortune, model, tmp_path):
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    name = _variant(get_target(loop_target), name="stranger", identity=str(stranger))
    done = ortune("bench", model, "--target", name)
    assert done.code == 2 and "refused the login" in _one_line(done)


def test_changed_host_key(loop_target, ortune, model, tmp_path, sshd):
    other = tmp_path / "other_host"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    target = get_target(loop_target)
    try:
        trust_host_keys(target, [f"x {other.with_suffix('.pub').read_text().strip()}"])
        done = ortune("bench", model, "--target", loop_target)
        assert done.code == 2 and "host key" in _one_line(done) and "changed" in done.stderr
    finally:
        trust_host_keys(target, [f"x {sshd.host_key_pub.read_text().strip()}"])


def test_ortune_missing_there(loop_target, ortune, model):
    name = _variant(get_target(loop_target), name="bare", command="/nonexistent/ortune")
    done = ortune("bench", model, "--target", name)
    assert done.code == 2 and "not installed" in _one_line(done) and "pip install ortune==" in done.stderr


def test_another_version_there(loop_target, ortune, model, tmp_path):
    fake = tmp_path / "old_ortune.py"
    fake.write_text("import json, sys\nprint(json.dumps({'hello': {'version': '0.0.1', 'ort': '1.0'}}))\n"
                    "sys.stdout.flush()\nsys.stdin.read()\n")
    name = _variant(get_target(loop_target), name="old", command=f"{sys.executable} {fake}")
    done = ortune("bench", model, "--target", name)
    assert done.code == 2 and "runs ORTune 0.0.1" in _one_line(done) and "pip install ortune==" in done.stderr


def test_a_login_shell_that_prints_first_is_named(loop_target, ortune, model, sshd):
    banner = "printf 'Welcome\\033[2J to the box\\n'; "
    name = _variant(get_target(loop_target), name="chatty", command=banner + sshd.command())
    done = ortune("bench", model, "--target", name)
    line = _one_line(done)
    assert done.code == 2 and "login shell" in line and "printed text before the worker started" in line
    assert "Welcome\\x1b[2J to the box" in line and "\x1b" not in line


def _started(handle: RemoteHandle, timeout: float = 60) -> None:
    """Drive the handle until its job has a child on the target."""
    deadline = time.monotonic() + timeout
    for _ in handle.events():
        if handle.remote_pid or time.monotonic() > deadline:
            return


def _gone(pid: int, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not os.path.exists(f"/proc/{pid}") or "zombie" in _state(pid):
            return True
        time.sleep(0.2)
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


LONG = {"run": {"duration_s": 60}}


def test_connection_killed_mid_run(loop_target, model):
    handle = RemoteHandle(get_target(loop_target), BENCH, BENCH.make_params({"path": str(model), **LONG})).start()
    _started(handle)
    assert handle.remote_pid
    os.kill(handle.pid, signal.SIGKILL)                     # the ssh client: the connection drops
    with pytest.raises(UserError) as failure:
        handle.wait()
    assert failure.value.kind == "target-lost" and "ended before the job did" in failure.value.message
    # the local ssh client's signal, named as such, not as the worker's exit code
    assert "ssh client on this machine was ended by SIGKILL" in failure.value.message
    assert describe_failure(failure.value).exit_code == 2
    assert _gone(handle.remote_pid)                          # the worker cancelled its job there


def test_remote_child_killed(loop_target, model):
    handle = RemoteHandle(get_target(loop_target), BENCH, BENCH.make_params({"path": str(model), **LONG})).start()
    _started(handle)
    os.kill(handle.remote_pid, signal.SIGKILL)
    with pytest.raises(JobFailed) as failure:
        handle.wait()
    assert failure.value.kind == "crashed"


def test_remote_child_past_its_budget(loop_target, model):
    handle = RemoteHandle(get_target(loop_target), BENCH, BENCH.make_params({"path": str(model), **LONG}),
                          memory_limit="30M").start()
    with pytest.raises(UserError) as failure:
        handle.wait()
    assert failure.value.kind == "over-memory-budget"


def test_cancel_stops_the_remote_job(loop_target, model):
    handle = RemoteHandle(get_target(loop_target), BENCH, BENCH.make_params({"path": str(model), **LONG})).start()
    _started(handle)
    handle.cancel()
    with pytest.raises(JobCancelled):
        handle.wait()
    assert _gone(handle.remote_pid)


def test_a_dropped_upload_leaves_no_partial_file(tmp_path, monkeypatch):
    from app.core.launch import worker

    from app.core.targets.upload import content_key

    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    sha = content_key([("m.onnx", "cd" * 32)])            # a put the worker accepts, then never finished
    stream = io.BytesIO(b"".join(channel.encode(m) for m in (
        {"put": {"sha": sha, "name": "m.onnx", "files": [{"name": "m.onnx", "sha": "cd" * 32}]}},
        {"file": "m.onnx"}, {"chunk": "aGVsbG8="})))                    # and then the line goes dead
    out = io.BytesIO()
    monkeypatch.setattr(worker.Worker, "hello", lambda self: None)
    assert worker.Worker(stream, out).serve() == 0
    assert not any((tmp_path / "data" / "target-cache").iterdir())


def test_an_upload_outside_its_folder_is_refused(tmp_path, monkeypatch):
    from app.core.launch import worker

    monkeypatch.setenv("ORTUNE_DATA_DIR", str(tmp_path / "data"))
    stream = io.BytesIO(b"".join(channel.encode(m) for m in (
        {"put": {"sha": "ab" * 32, "name": "m.onnx", "files": [{"name": "../../evil", "sha": "cd" * 32}]}},
        {"file": "../../evil"})))
    out = io.BytesIO()
    monkeypatch.setattr(worker.Worker, "hello", lambda self: None)
    worker.Worker(stream, out).serve()
    assert b"could not store or send a file" in out.getvalue()
    assert not (tmp_path / "evil").exists() and not (tmp_path / "data" / "evil").exists()
