"""The bridge between core jobs and Qt: a worker object in a QThread per job.

The job itself runs in the core runner's child process; the worker only reads the
runner's events and re-emits them as signals in the GUI thread. All jobs go through
one JobManager, which is also the one place their errors are reported from. It keeps
the newest finished jobs for the Jobs dock and releases older ones (thread, worker and
result), so a long session does not hold every result it ever made: a tab keeps its own
reference to what it shows."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.core.jobs.entry import Job
from app.core.jobs.errors import JobCancelled
from app.core.jobs.params import Params
from app.core.store.settings import FINISHED_JOBS_KEPT


class JobWorker(QObject):
    started = Signal()
    progress = Signal(object, str)     # fraction (or None), message
    log = Signal(str, str)             # level, message
    data = Signal(str, object)         # kind, payload
    returned = Signal(object)
    errored = Signal(object)           # the exception
    finished = Signal()

    def __init__(self, job, params, target: str | None = None, cluster: str | None = None):
        """`target`: the remote target the window measures on (None: this machine); `cluster`:
        the Ray cluster's address the window spreads over instead. A job that may not run
        there runs here (app.core.launch.start, which also keeps its result in the history
        as its entry says)."""
        super().__init__()
        from app.core.launch.start import Where, start
        self.handle = start(job, params, Where.of(target, cluster).fitting(job))

    @Slot()
    def run(self) -> None:
        self.started.emit()
        try:
            self.handle.start()
            for kind, payload in self.handle.events():
                if kind == "progress":
                    self.progress.emit(payload.get("fraction"), payload.get("message", ""))
                elif kind == "log":
                    self.log.emit(payload.get("level", "info"), payload.get("message", ""))
                elif kind == "data":
                    self.data.emit(payload.get("kind", ""), payload.get("payload"))
        except Exception as exc:  # the runner itself failed (e.g. could not start a process)
            self.errored.emit(exc)
        else:
            if self.handle.error is not None:
                self.errored.emit(self.handle.error)
            else:
                self.returned.emit(self.handle.result)
        # Back to the GUI thread, which owns the Python side and deletes the worker once the job
        # is over: deleting it here, as the thread ends, would race the GUI thread's reference.
        from PySide6.QtCore import QCoreApplication
        self.moveToThread(QCoreApplication.instance().thread())
        self.finished.emit()

    def cancel(self) -> None:
        self.handle.cancel()


_ids = itertools.count(1)
P = TypeVar("P", bound=Params)


def typed_params(entry: Job[P], params: P | None) -> P:
    """`params` as the entry's own parameters (None: their defaults). A dict is refused: a
    misspelt key would be found only when the job runs; the dataclass finds it where it is built."""
    if params is None:
        params = entry.params()
    if not isinstance(params, entry.params):
        raise TypeError(f"{entry.name} takes {entry.params.__name__}, not {type(params).__name__}")
    return params


@dataclass(eq=False)
class RunningJob:
    title: str
    entry: Job                        # what runs (app.core.jobs.entry)
    worker: JobWorker | None          # None once its thread has finished
    thread: QThread | None            # None once the job is released
    id: int = field(default_factory=lambda: next(_ids))
    state: str = "running"            # running | cancelling | done | failed | cancelled
    fraction: float | None = None
    message: str = ""
    started_at: float = field(default_factory=time.monotonic)
    ended_at: float | None = None
    error: Exception | None = None
    result: Any = None

    def eta_s(self) -> float | None:
        if self.state != "running" or not self.fraction or self.fraction <= 0.02:
            return None
        elapsed = time.monotonic() - self.started_at
        return elapsed * (1 - self.fraction) / self.fraction

    def cancel(self) -> None:
        if self.state == "running" and self.worker is not None:
            self.state = "cancelling"
            self.worker.cancel()


class _JobRelay(QObject):
    """Lives in the GUI thread; the worker's signals reach it queued, so every
    callback below runs in the GUI thread, never in the worker's."""

    def __init__(self, manager: "JobManager", job: RunningJob, callbacks: dict):
        super().__init__(manager)
        self.manager, self.job, self.callbacks = manager, job, callbacks

    def _call(self, name: str, *args) -> None:
        callback = self.callbacks.get(name)
        if callback is not None:
            callback(*args)

    @Slot(object, str)
    def progressed(self, fraction, message) -> None:
        self.job.fraction, self.job.message = fraction, message
        self.manager.job_changed.emit(self.job)
        self._call("on_progress", fraction, message)

    @Slot(str, str)
    def logged(self, level, message) -> None:
        self.manager.log.emit(self.job.title, level, message)

    @Slot(str, object)
    def received(self, kind, payload) -> None:
        self._call("on_data", kind, payload)

    @Slot(object)
    def returned(self, value) -> None:
        self.job.state, self.job.result = "done", value
        self._call("on_result", value)

    @Slot(object)
    def errored(self, exc) -> None:
        self.job.error = exc
        self.job.state = "cancelled" if isinstance(exc, JobCancelled) else "failed"
        self._call("on_error", exc)
        if self.job.state == "failed":
            self.manager.job_failed.emit(self.job, exc)

    @Slot()
    def thread_done(self) -> None:
        self.job.ended_at = time.monotonic()
        self.job.worker = None            # the last reference: the worker and its handle go
        self.manager.job_finished.emit(self.job)
        self.deleteLater()
        self.manager.release_finished()


class JobManager(QObject):
    job_added = Signal(object)
    job_changed = Signal(object)
    job_finished = Signal(object)
    job_failed = Signal(object, object)   # job, exception (not for cancels)
    log = Signal(str, str, str)           # job title, level, message
    job_released = Signal(object)         # a finished job past the newest `keep_finished`

    def __init__(self, parent: QObject | None = None, keep_finished: int = FINISHED_JOBS_KEPT):
        super().__init__(parent)
        self.jobs: list[RunningJob] = []
        self.keep_finished = keep_finished
        self.target: str | None = None      # the remote target measuring jobs run on; None: this machine
        self.cluster: str | None = None     # the Ray cluster (its address) the jobs that spread go to

    def start(self, title: str, entry: Job[P], params: P | None = None, *,
              on_result: Callable[[Any], None] | None = None,
              on_data: Callable[[str, Any], None] | None = None,
              on_error: Callable[[Exception], None] | None = None,
              on_progress: Callable[[float | None, str], None] | None = None,
              target: str | None = "") -> RunningJob:
        """Run `entry` on `params`, its parameters dataclass (see typed_params). `target`: the remote
        target to run on ("" for the window's choice, a target or a cluster; None for this machine)."""
        params = typed_params(entry, params)
        thread = QThread(self)
        window_choice = target == ""
        worker = JobWorker(entry, params, self.target if window_choice else target,
                           self.cluster if window_choice else None)
        worker.moveToThread(thread)
        job = RunningJob(title=title, entry=entry, worker=worker, thread=thread)
        relay = _JobRelay(self, job, {"on_result": on_result, "on_data": on_data,
                                      "on_error": on_error, "on_progress": on_progress})
        worker.progress.connect(relay.progressed)
        worker.log.connect(relay.logged)
        worker.data.connect(relay.received)
        worker.returned.connect(relay.returned)
        worker.errored.connect(relay.errored)
        # Quit from the worker's own thread: a queued quit would wait for the GUI thread, which may be
        # blocked in shutdown() waiting for this very thread.
        from PySide6.QtCore import Qt  # not at module level: Qt's namespace is slow to load at start-up
        worker.finished.connect(thread.quit, Qt.ConnectionType.DirectConnection)
        thread.started.connect(worker.run)
        thread.finished.connect(relay.thread_done)
        self.jobs.append(job)
        self.job_added.emit(job)
        thread.start()
        return job

    def release_finished(self) -> None:
        """Forget all but the newest `keep_finished` finished jobs: delete their threads and drop
        their results (a tab that shows a result holds its own reference to it)."""
        finished = [job for job in self.jobs if job.ended_at is not None]
        for job in finished[:max(0, len(finished) - self.keep_finished)]:
            self.jobs.remove(job)
            job.thread.deleteLater()
            job.thread = None
            job.result = None
            self.job_released.emit(job)

    def note(self, job: RunningJob, message: str) -> None:
        """Set what the Jobs dock says of `job` (a tab's last word on it, e.g. the runs kept on a cancel)."""
        job.message = message
        self.job_changed.emit(job)

    def running(self) -> list[RunningJob]:
        return [j for j in self.jobs if j.state in ("running", "cancelling")]

    def cancel_all(self) -> None:
        for job in self.running():
            job.cancel()

    def shutdown(self, timeout_ms: int = 10000) -> None:
        """Cancel every job and wait for its thread, so none is left running."""
        self.cancel_all()
        for job in self.jobs:
            if job.thread.isRunning():
                job.thread.wait(timeout_ms)
