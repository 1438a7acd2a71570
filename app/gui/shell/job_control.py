"""How every tab runs its job: one JobControl per view that runs one job at a time.

It owns the Start and Cancel buttons, a progress bar with the time left (estimated from the
work measured so far, and never at 100 % while work remains), and the status line; it starts
the job through the window's JobManager, routes the result to the view's `show`, says in one
line why a job stopped (the window's error box, from the manager, is the one place that
reports it at length), and keeps the view's RunCaption honest: a run greys the results shown
until its own arrive, and a run that ends without any leaves them greyed as an earlier run's.

Like superqt's WorkerBase, it has a small fixed set of signals: `succeeded` (result, what it
ran on), `stopped` (the exception: JobCancelled for a cancel, and what it ran on) and `ended`
after either, once the buttons are back."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton

from app.gui.widgets.theme import verdict_color

@dataclass(frozen=True)
class RunOf:
    """What a job runs on, for the caption over its result: the model's path, its label, when."""
    path: str
    label: str
    started: float = field(default_factory=time.time)


def progress_percent(fraction: float) -> int:
    """The bar's value for `fraction` of the work done: 100 only once it is all done."""
    fraction = min(max(fraction, 0.0), 1.0)
    return 100 if fraction >= 1.0 else min(99, math.floor(100 * fraction))


def eta_text(left_s: float | None) -> str:
    """The time left (the running job's estimate, from the rate its work went at so far) in
    words; '' while there is no rate to go by."""
    if left_s is None:
        return ""
    if left_s < 90:
        return f"about {max(1, round(left_s))} s left"
    if left_s < 90 * 60:
        return f"about {round(left_s / 60)} min left"
    return f"about {left_s / 3600:.1f} h left"


def stopped_text(exc: BaseException) -> str:
    """The status line's one sentence for a job that ended without a result (the window's
    error box, the one place errors are reported at length, names an internal error's log)."""
    from app.core.jobs.errors import JobCancelled

    if isinstance(exc, JobCancelled):
        return "Cancelled."
    return f"Stopped: {getattr(exc, 'message', None) or exc}"


class JobControl(QObject):
    succeeded = Signal(object, object)     # result, RunOf (or None)
    stopped = Signal(object, object)       # exception (JobCancelled for a cancel), RunOf (or None)
    ended = Signal()                       # after either, the buttons back as they were

    def __init__(self, jobs, start: Callable[[], None], start_text: str = "Start", cancel_text: str = "Cancel",
                 cancel_tip: str = "", caption=None, parent: QObject | None = None):
        """`jobs`: the window's JobManager; `start`: the view's own start (it collects the
        parameters and calls run); `caption`: the RunCaption over the view's results, if any."""
        super().__init__(parent)
        self.jobs, self.caption = jobs, caption
        self.job = None
        self.last_job = None                   # the running job, or the one that ran last
        self.subject: RunOf | None = None      # what the running (or last) job ran on
        self._ready = True
        self.start_button, self.cancel_button = QPushButton(start_text), QPushButton(cancel_text)
        self.start_button.clicked.connect(lambda: start())
        self.cancel_button.clicked.connect(lambda: self.cancel())
        self.cancel_button.setEnabled(False)
        if cancel_tip:
            self.cancel_button.setToolTip(cancel_tip)
        self.buttons = QHBoxLayout()
        self.buttons.addWidget(self.start_button)
        self.buttons.addWidget(self.cancel_button)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setVisible(False)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)     # it shows names from files
        self.status.setWordWrap(True)

    # state ---------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.job is not None

    def set_ready(self, ready: bool) -> None:
        """Whether the view could start now (a model chosen and read …); Start is on only then,
        and only while no job of this view runs."""
        self._ready = ready
        self.start_button.setEnabled(ready and self.job is None)

    def say(self, text: str, failed: bool = False) -> None:
        """The status line; `failed` shows it in the colour of a failed check."""
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {verdict_color(False)};" if failed else "")

    # running -------------------------------------------------------------------------------
    def run(self, title: str, entry, params, show: Callable[[Any, RunOf | None], None], *,
            subject: RunOf | None = None, on_data: Callable[[str, Any], None] | None = None,
            message: str = "Starting…"):
        """Start `entry` on `params` (nothing if a job of this view runs); its result goes to
        `show(result, subject)`. `subject`: the model it runs on, which the caption names."""
        if self.job is not None:
            return None
        # first: parameters the manager refuses leave the view as it was (what it sends back is queued)
        self.job = self.last_job = self.jobs.start(
            title, entry, params, on_data=on_data, on_progress=self._progressed,
            on_result=lambda result: self._returned(result, show), on_error=self._errored)
        self.subject = subject
        if self.caption is not None and subject is not None:
            self.caption.running(subject.label)
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        self.progress.setFormat("%p %")
        self.progress.setVisible(True)
        self.say(message)
        return self.job

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def note(self, text: str) -> None:
        """Say `text` of the last job in the Jobs dock (the tab's last word on it, e.g. the runs
        a cancelled benchmark kept)."""
        if self.last_job is not None:
            self.jobs.note(self.last_job, text)

    def _progressed(self, fraction: float | None, message: str) -> None:
        """The share of the work done and the time left; a bar that moves to and fro when the
        job cannot tell how much is left."""
        if fraction is None:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 100)
            self.progress.setValue(progress_percent(fraction))
            left = eta_text(self.job.eta_s()) if self.job is not None else ""
            self.progress.setFormat("%p %" + (f" — {left}" if left else ""))
        if message:
            self.say(message)

    def _finish(self) -> None:
        self.job = None
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)
        self.start_button.setEnabled(self._ready)

    def _returned(self, result, show) -> None:
        self._finish()
        self.say("Done.")
        show(result, self.subject)
        self.succeeded.emit(result, self.subject)
        self.ended.emit()

    def _errored(self, exc) -> None:
        from app.core.jobs.errors import JobCancelled

        self._finish()
        self.say(stopped_text(exc), failed=not isinstance(exc, JobCancelled))
        self.stopped.emit(exc, self.subject)     # a view may show what a cancelled run measured
        if self.caption is not None and self.caption.state == "running":
            self.caption.stopped()
        self.ended.emit()
