"""The search's clock: how much of the budget is left, when the work planned is expected
to end (the ETA: the budget's end, or sooner when the work left is known to be shorter), and
a context for each sub-job that is cancelled when the budget is spent, so the budget holds
even when one conversion takes longer than expected."""

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
        self.expected_end: float | None = None    # seconds from the start the work planned should end by
        self.shown = 0.0              # the bar's last fraction: it never goes back

    def expect(self, seconds_from_now: float) -> None:
        """The work still planned should take about this long (the ETA never passes the budget)."""
        self.expected_end = self.elapsed() + max(0.0, seconds_from_now)

    def eta(self) -> float:
        """Seconds until the search is expected to end."""
        end = self.seconds if self.expected_end is None else min(self.seconds, self.expected_end)
        return max(0.0, end - self.elapsed())

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def left(self) -> float:
        return self.seconds - self.elapsed()

    def progress(self, message: str = "") -> None:
        """The bar as the share of the expected time spent (never going back), with what runs
        and about how long is left."""
        elapsed, eta = self.elapsed(), self.eta()
        fraction = max(self.shown, min(1.0, elapsed / max(elapsed + eta, 1e-9)))
        self.shown = fraction
        self.ctx.progress(fraction, f"{self.label}{': ' + message if message else ''} — about {eta:.0f} s left")

    @contextlib.contextmanager
    def sub(self, label: str, share: int = 1):
        """A context for one sub-job: its progress becomes the budget's, its logs are passed on,
        and it is cancelled with the search or once the budget (with HARD_STOP) is spent.
        `share`: how many sub-jobs run at once, which split the memory budget between them."""
        self.label = label

        def emit(kind: str, payload: dict) -> None:
            if kind == "progress":
                self.progress(payload.get("message", ""))
            elif kind == "log":
                self.ctx.log(f"{label}: {payload['message']}", payload.get("level", "info"))

        memory = self.ctx.memory_budget // share if self.ctx.memory_budget else None
        sub = JobContext(emit, memory)
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
