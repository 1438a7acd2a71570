"""The job protocol shared by the window, the command line and the tests.

A job is a plain function `job(params, ctx: JobContext) -> dict`, started through its
entry (app.core.jobs.entry.Job) with its typed parameters. It reports
through `ctx` (progress, log lines, data batches) and checks `ctx.check_cancel()`
between steps. Work that can be interrupted from outside (an ORT run) registers a
hook with `ctx.on_cancel`, e.g. one that sets `RunOptions.terminate`.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from app.core.jobs.errors import JobCancelled

Emit = Callable[[str, dict], None]


class JobContext:
    """What a running job sees of the world: an event sink and a cancel flag."""

    def __init__(self, emit: Emit | None = None, memory_budget: int | None = None):
        self._emit = emit or (lambda kind, payload: None)
        #: bytes this job may hold (app.core.jobs.memory); None where nobody set one
        self.memory_budget = memory_budget
        self._cancelled = threading.Event()
        self._cancel_hooks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    # reporting -------------------------------------------------------------
    def progress(self, fraction: float | None, message: str = "") -> None:
        self._emit("progress", {"fraction": fraction, "message": message})

    def log(self, message: str, level: str = "info") -> None:
        self._emit("log", {"level": level, "message": message, "time": time.time()})

    def data(self, kind: str, payload: Any) -> None:
        self._emit("data", {"kind": kind, "payload": payload})

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
        for hook in hooks:
            hook()
