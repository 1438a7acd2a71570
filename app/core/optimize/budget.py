"""The search's clock: how much of the budget is left, what the next piece of work is
expected to cost, and a context for each sub-job that is cancelled when the budget is spent,
so the budget holds even when one conversion takes longer than expected."""

from __future__ import annotations

import contextlib
import threading
import time

from app.core.jobs.protocol import JobContext

#: a sub-job still running this far past the budget is stopped (the budget is honoured within 10 %)
HARD_STOP = 1.05


class Budget:
    def __init__(self, seconds: float, ctx: JobContext):
        self.seconds, self.ctx = seconds, ctx
        self.started = time.monotonic()
        self.ran_out = False          # a sub-job was stopped because the budget was spent
        self.label = ""               # what runs now, for the progress line

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def left(self) -> float:
        return self.seconds - self.elapsed()

    def progress(self, message: str = "") -> None:
        """The bar as the share of the budget spent, with what runs and about how long is left."""
        fraction = min(1.0, self.elapsed() / self.seconds)
        left = max(0.0, self.left())
        self.ctx.progress(fraction, f"{self.label}{': ' + message if message else ''} — about {left:.0f} s left")

    @contextlib.contextmanager
    def sub(self, label: str):
        """A context for one sub-job: its progress becomes the budget's, its logs are passed on,
        and it is cancelled with the search or once the budget (with HARD_STOP) is spent."""
        self.label = label

        def emit(kind: str, payload: dict) -> None:
            if kind == "progress":
                self.progress(payload.get("message", ""))
            elif kind == "log":
                self.ctx.log(f"{label}: {payload['message']}", payload.get("level", "info"))

        sub = JobContext(emit, self.ctx.memory_budget)
        remove = self.ctx.on_cancel(sub.cancel)

        def spent() -> None:
            self.ran_out = True
            sub.cancel()

        timer = threading.Timer(max(0.0, self.seconds * HARD_STOP - self.elapsed()), spent)
        timer.daemon = True
        timer.start()
        try:
            yield sub
        finally:
            timer.cancel()
            remove()
