import os
import re
import time

import pytest

from app.core.jobs.errors import JobCancelled, JobFailed, UserError
from app.core.jobs.protocol import JobContext
from app.core.runner.process import CANCEL_GRACE_S, JobHandle, run_job
from tests.sample_jobs import (ABORT, COOPERATIVE, DOUBLER, ECHO, EXIT_CODE, INTERNAL_ERROR, RUNTIME_REFUSAL, STUBBORN,
                               STUBBORN_STAGER, USER_ERROR)


def test_result_and_events_come_from_a_child_process():
    events = []
    result = run_job(ECHO, {"value": 42}, on_event=lambda k, p: events.append((k, p)))
    assert result["echo"] == 42
    assert result["pid"] != os.getpid()
    kinds = [k for k, _ in events]
    assert kinds.count("progress") == 3 and "log" in kinds
    assert ("data", {"kind": "numbers", "payload": [1, 2, 3]}) in events


@pytest.mark.parametrize("isolate", [True, False])
def test_user_error_keeps_its_kind_and_message(isolate):
    with pytest.raises(UserError) as info:
        run_job(USER_ERROR, isolate=isolate)
    assert info.value.kind == "bad-option"
    assert info.value.message == "the value is wrong"


def test_internal_error_carries_the_traceback():
    with pytest.raises(JobFailed) as info:
        run_job(INTERNAL_ERROR)
    assert info.value.kind == "internal"
    assert "ZeroDivisionError" in info.value.message
    assert "sample_jobs.py" in info.value.traceback


def test_a_crashing_child_becomes_a_clear_error():
    with pytest.raises(JobFailed) as info:
        run_job(ABORT)
    assert info.value.kind == "crashed"
    assert "SIGABRT" in info.value.message


def test_an_unexpected_exit_code_is_reported():
    with pytest.raises(JobFailed) as info:
        run_job(EXIT_CODE, {"code": 7})
    assert "exit code 7" in info.value.message


@pytest.mark.parametrize("isolate", [True, False])
def test_cooperative_cancel(isolate):
    handle = JobHandle(COOPERATIVE, isolate=isolate).start()
    started = time.monotonic()
    for kind, _ in handle.events():
        if kind == "progress":
            handle.cancel()
    assert isinstance(handle.error, JobCancelled)
    assert time.monotonic() - started < 10


def test_a_child_that_ignores_cancel_is_ended():
    handle = JobHandle(STUBBORN).start()
    for kind, _ in handle.events():
        if kind == "progress":
            handle.cancel()
    assert isinstance(handle.error, JobCancelled)
    assert not handle._process.is_alive()


def test_a_child_ended_after_a_cancel_it_ignored_leaves_no_staging_folder(tmp_path):
    # a loaded machine can keep a conversion from reaching its next cancel check within the
    # grace: the child is then ended, cannot tidy up, and its parent removes what it staged
    handle = JobHandle(STUBBORN_STAGER, {"path": str(tmp_path / "out.onnx")}).start()
    for kind, _ in handle.events():
        if kind == "progress":
            assert list(tmp_path.glob(".out.onnx.*.partial"))
            handle.cancel()
    assert isinstance(handle.error, JobCancelled) and handle._process.exitcode != 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("params, message", [({"code": "x"}, "code expects a whole number"),
                                             ({"colour": 1}, "unknown setting(s): colour"), ([1], "expects an object")])
def test_wrong_parameters_end_the_job_before_it_starts(params, message):
    handle = JobHandle(ECHO, params).start()
    assert handle.done and handle.pid is None
    with pytest.raises(UserError, match=re.escape(message)):
        handle.wait()


@pytest.mark.parametrize("isolate", [True, False])
def test_a_running_job_takes_commands_from_its_parent(isolate):
    handle = JobHandle(DOUBLER, isolate=isolate).start()
    answers = []
    for number in (3, 5):
        handle.send(number)
        for kind, payload in handle.events():
            if kind == "data":
                answers.append(payload["payload"])
                break
    handle.send("stop")
    assert handle.wait() == {"answered": 2}
    assert answers == [6, 10]


@pytest.mark.parametrize("isolate", [True, False])
def test_cancel_wakes_a_job_waiting_for_a_command(isolate):
    handle = JobHandle(DOUBLER, isolate=isolate).start()
    started = time.monotonic()
    handle.cancel()
    with pytest.raises(JobCancelled):
        handle.wait()
    assert time.monotonic() - started < CANCEL_GRACE_S


def test_receive_gives_up_after_its_timeout():
    with pytest.raises(TimeoutError):
        JobContext().receive(timeout=0.01)


def test_cancel_hooks_run_once_when_cancelled():
    ctx = JobContext()
    calls = []
    remove = ctx.on_cancel(lambda: calls.append(1))
    ctx.cancel()
    assert calls == [1]
    remove()
    with pytest.raises(JobCancelled):
        ctx.check_cancel()


def test_onnx_runtime_refusals_are_user_errors(tmp_path):
    from tests import models
    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    with pytest.raises(UserError) as info:
        run_job(RUNTIME_REFUSAL, {"path": str(path)})
    assert info.value.kind == "runtime-error"
    assert info.value.message.startswith("tiny.onnx: ONNX Runtime refused to run it: ")
    assert "INVALID_ARGUMENT" not in info.value.message


def test_onnx_runtimes_log_reaches_the_parent_as_warnings_once_and_never_raw(capfd):
    from app.core.store.paths import log_dir
    from tests.core.jobs.test_stdio import RELAYED
    from tests.sample_jobs import NATIVE_LOG

    events = []
    assert run_job(NATIVE_LOG, on_event=lambda kind, payload: events.append((kind, payload)))
    assert [p["message"] for kind, p in events if kind == "log" and p["level"] == "warning"] == RELAYED
    out, err = capfd.readouterr()
    assert "onnxruntime" not in out + err and "\x1b[" not in out + err
    kept = (log_dir() / "jobs.log").read_text(encoding="utf-8")
    assert "Session created" in kept and "written outside a capture" in kept
