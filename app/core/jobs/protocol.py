"""The job protocol shared by the window, the command line and the tests.

A job is a plain function `job(params, ctx: JobContext) -> dict`, started through its
entry (app.core.jobs.entry.Job) with its typed parameters. It reports
through `ctx` (progress, log lines, data batches) and checks `ctx.check_cancel()`
between steps. Work that can be interrupted from outside (an ORT run) registers a
hook with `ctx.on_cancel`, e.g. one that sets `RunOptions.terminate`. A job that takes
commands while it runs reads them with `ctx.receive()` (its parent sends them with
JobHandle.send).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from typing import Any, Callable

from app.core.jobs.errors import JobCancelled

Emit = Callable[[str, dict], None]
_WAKE = object()    # put in the inbox by cancel, so a job waiting in receive() wakes up


class JobContext:
    """What a running job sees of the world: an event sink and a cancel flag."""

    def __init__(self, emit: Emit | None = None, memory_budget: int | None = None):
        self._emit = emit or (lambda kind, payload: None)
        #: bytes this job may hold (app.core.jobs.memory); None where nobody set one
        self.memory_budget = memory_budget
        self._cancelled = threading.Event()
        self._cancel_hooks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._inbox: queue.Queue = queue.Queue()

    # reporting -------------------------------------------------------------
    def progress(self, fraction: float | None, message: str = "") -> None:
        self._emit("progress", {"fraction": fraction, "message": message})

    def log(self, message: str, level: str = "info") -> None:
        self._emit("log", {"level": level, "message": message, "time": time.time()})

    def data(self, kind: str, payload: Any) -> None:
        self._emit("data", {"kind": kind, "payload": payload})

    # commands from the parent ----------------------------------------------
    def deliver(self, message: Any) -> None:
        """Called by the runner with a message the parent sent (JobHandle.send)."""
        self._inbox.put(message)

    def receive(self, timeout: float | None = None) -> Any:
        """The next message from the parent, waiting for it; JobCancelled once cancel is
        requested, TimeoutError when nothing came within `timeout` seconds."""
        self.check_cancel()
        try:
            message = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message from the parent within {timeout} s") from None
        if message is _WAKE:
            raise JobCancelled()
        return message

    # cancelling ------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def check_cancel(self) -> None:
        if self._cancelled.is_set():
            raise JobCancelled()

    def on_cancel(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Call `hook` when cancel is requested (at once if it already was).

        Returns a function that removes the hook again."""
        with self._lock:
            self._cancel_hooks.append(hook)
            already = self._cancelled.is_set()
        if already:
            hook()

        def remove() -> None:
            with self._lock:
                if hook in self._cancel_hooks:
                    self._cancel_hooks.remove(hook)

        return remove

    def cancel(self) -> None:
        with self._lock:
            self._cancelled.set()
            hooks = list(self._cancel_hooks)
        self._inbox.put(_WAKE)
        for hook in hooks:
            hook()


def stage_events(ctx: JobContext, start: float, share: float, label: str = "") -> Emit:
    """The events of one stage of a job (a child's, a scaled context's) as `ctx`'s own: progress
    fills [start, start + share] of its bar (under `label`), log lines and data pass on."""
    def emit(kind: str, payload: dict) -> None:
        if kind == "progress":
            fraction = payload.get("fraction")
            message = payload.get("message", "")
            ctx.progress(None if fraction is None else start + share * fraction,
                         f"{label}: {message}" if label else message)
        elif kind == "log":
            ctx.log(payload["message"], payload.get("level", "info"))
        else:
            ctx.data(payload["kind"], payload["payload"])
    return emit


@contextlib.contextmanager
def scaled_context(ctx: JobContext, start: float, share: float, label: str):
    """A context for one stage of a job (stage_events), cancelled with `ctx`."""
    scaled = JobContext(stage_events(ctx, start, share, label), ctx.memory_budget)
    remove = ctx.on_cancel(scaled.cancel)
    try:
        yield scaled
    finally:
        remove()
