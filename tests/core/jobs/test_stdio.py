"""ONNX Runtime's log lines, as it writes them (coloured, with its source places), read as
plain warnings."""

from app.core.jobs.stdio import ort_warnings
from tests.sample_jobs import ORT_LINES

RELAYED = ["ONNX Runtime: Removing initializer 'w'.",
           "ONNX Runtime: pthread_setaffinity_np failed for thread: 8, error code: 22"]


def test_warnings_and_errors_are_kept_and_the_rest_is_not():
    """Info lines are chatter, and a failed run's line says what its exception says."""
    text = b"".join(ORT_LINES).decode() + "a line of someone else's\n"
    assert ort_warnings(text) == RELAYED
