"""One way to fail, shared by the window and the command line."""

import pytest

from app.core.jobs.errors import JobCancelled, JobFailed, UserError
from app.core.runner.failure import describe_failure
from app.core.runner.process import run_job
from tests.sample_jobs import ABORT, INTERNAL_ERROR


@pytest.mark.parametrize("exc, kind, code, line", [
    (UserError("bad-option", "--threads expects a whole number"), "bad-option", 2, "--threads expects a whole number"),
    (JobCancelled(), "cancelled", 3, "cancelled"),
    (JobFailed("crashed", "the job's process crashed (SIGABRT)"), "crashed", 1, "the job's process crashed (SIGABRT)"),
])
def test_expected_failures_are_one_line_without_a_log(exc, kind, code, line):
    failure = describe_failure(exc)
    assert (failure.kind, failure.exit_code, failure.line, failure.log) == (kind, code, line, None)


def test_an_internal_error_in_a_child_keeps_the_child_traceback_in_a_log():
    with pytest.raises(JobFailed) as caught:
        run_job(INTERNAL_ERROR)
    failure = describe_failure(caught.value)
    assert failure.kind == "internal" and failure.exit_code == 1
    assert failure.line.startswith("internal error: ZeroDivisionError: boom; the details are in ")
    assert "def internal_error" in failure.log.read_text() or "ZeroDivisionError" in failure.log.read_text()


def test_an_error_of_this_process_logs_its_own_traceback():
    try:
        {}["missing"]
    except KeyError as exc:
        failure = describe_failure(exc)
    assert failure.message == "KeyError: 'missing'"
    assert 'in test_an_error_of_this_process_logs_its_own_traceback' in failure.log.read_text()


def test_a_crashed_child_is_one_line():
    with pytest.raises(JobFailed) as caught:
        run_job(ABORT)
    failure = describe_failure(caught.value)
    assert failure.kind == "crashed" and "SIGABRT" in failure.line and failure.log is None
