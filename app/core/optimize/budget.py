"""The search's clock: how much of the budget is left, when the work planned is expected
to end (the ETA: the budget's end, or sooner when the work left is known to be shorter), and
a context for each sub-job that is cancelled when the budget is spent, so the budget holds
even when one conversion takes longer than expected.

It also learns what the work costs on this machine, so each phase plans against what is left
at the cost it will really have: starting one measured process (an interpreter, ONNX Runtime,
a session, its feeds, a warm-up: about 3 s each on a busy two-core machine, where a first
guess of 2 s let a 150 s search run 166 s), and making and checking one candidate. The last
seconds of the budget are kept for writing the folder to ship (FINISH_SHARE)."""

from __future__ import annotations

import contextlib
import threading
import time

from app.core.jobs.protocol import JobContext

#: a sub-job still running this far past the budget is stopped (the budget is honoured within 10 %)
HARD_STOP = 1.0
#: of the budget, this share (within FINISH_S) is kept for writing the folder and the report
FINISH_SHARE, FINISH_S = 0.03, (2.0, 5.0)
#: first guesses, replaced by what the search measures: starting one measured process, and
#: making and checking one candidate besides its speed check
START_GUESS_S, MAKE_GUESS_S = 3.0, 4.0


class Costs:
    """What a kind of work was seen to cost: the first guess until it is measured, then the
    mean of what was measured (each observation a whole phase's, so noise is averaged)."""

    def __init__(self, guess: float):
        self.guess, self.seen = guess, []

    def note(self, seconds: float) -> None:
        self.seen.append(max(0.0, seconds))

    @property
    def value(self) -> float:
        return sum(self.seen) / len(self.seen) if self.seen else self.guess


class Budget:
    def __init__(self, seconds: float, ctx: JobContext, clock=time.monotonic):
        self.seconds, self.ctx, self.clock = seconds, ctx, clock
        self.started = clock()
        self.ran_out = False          # a sub-job was stopped because the budget was spent
        self.label = ""               # what runs now, for the progress line
        self.expected_end: float | None = None    # seconds from the start the work planned should end by
        self.shown = 0.0              # the bar's last fraction: it never goes back
        self.finish = min(FINISH_S[1], max(FINISH_S[0], FINISH_SHARE * seconds))
        self.start_cost = Costs(START_GUESS_S)      # one measured process's start, seen
        self.make_cost = Costs(MAKE_GUESS_S)        # one candidate made and checked, seen

    @property
    def start_s(self) -> float:
        return self.start_cost.value

    def note_alternation(self, started: float, blocks_s: float, members: int) -> None:
        """An alternation of `members` ran from `started` (elapsed seconds) to now, of which
        `blocks_s` timing: the rest was their starts and stops."""
        if members > 0:
            self.start_cost.note((self.elapsed() - started - blocks_s) / members)

    def expect(self, seconds_from_now: float) -> None:
        """The work still planned should take about this long (the ETA never passes the budget)."""
        self.expected_end = self.elapsed() + max(0.0, seconds_from_now)

    def eta(self) -> float:
        """Seconds until the search is expected to end."""
        end = self.seconds if self.expected_end is None else min(self.seconds, self.expected_end)
        return max(0.0, end - self.elapsed())

    def elapsed(self) -> float:
        return self.clock() - self.started

    def left(self) -> float:
        """Seconds left for work: the budget less what is spent and the finish."""
        return self.seconds - self.finish - self.elapsed()

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
