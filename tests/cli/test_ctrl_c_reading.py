"""Ctrl+C while the command reads the job's events: it asks the job to stop and goes on
reading to the end, rather than raising in the middle of a read (which once left half a
message in the pipe, a read that waited for ever and a job that ran on after its command)."""

import os
import signal
import threading
from types import SimpleNamespace

import pytest

from app.cli import running
from app.core.jobs.errors import JobCancelled, JobFailed


class _Handle:
    def __init__(self, error=None):
        self.cancelled, self.read_after, self.error, self.result = 0, 0, None, None
        self._error = error

    def start(self):
        return self

    def cancel(self):
        self.cancelled += 1

    def events(self, poll_s=0.05):
        os.kill(os.getpid(), signal.SIGINT)       # Ctrl+C lands while the events are being read
        for _ in range(3):
            if self.cancelled:
                self.read_after += 1
            yield "progress", {"fraction": 0.5, "message": "working"}
        self.error = self._error

    def wait(self, on_event=None):
        for kind, payload in self.events():
            on_event(kind, payload)
        if self.error is not None:
            raise self.error
        return {"done": True}


@pytest.mark.parametrize("error", [None, JobFailed("crashed", "KeyboardInterrupt"), JobCancelled()])
def test_ctrl_c_asks_the_job_to_stop_and_reads_its_events_to_the_end(monkeypatch, error):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are set in the main thread only")
    handle = _Handle(error)
    monkeypatch.setattr(running, "start", lambda *a, **k: handle)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(JobCancelled, match="Ctrl"):
        running.run_job_cli(SimpleNamespace(name="fake", params=object), object())
    assert handle.cancelled == 1 and handle.read_after == 3, "no read was cut short"
    assert signal.getsignal(signal.SIGINT) is before, "the command's own Ctrl+C handling is back"
