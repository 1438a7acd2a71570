"""Running a job from a command: started and kept as every job is (app.core.launch.start), a
progress line on stderr, Ctrl+C asking the job to stop, and a failure turned into one line
and its exit code."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any, Callable

from app.cli.printing import LINE_LIMIT, print_json, warn
from app.core.ci_lines import runner_safe
from app.core.jobs.entry import Job
from app.core.jobs.errors import JobCancelled, UserError
from app.core.launch.start import Where, start
from app.core.runner.failure import describe_failure
from app.core.text import printable


class ProgressLine:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal; the job's
    warnings, one line each, wherever stderr goes."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._shown = False

    def __call__(self, kind: str, payload: dict) -> None:
        if kind == "log" and payload.get("level") in ("warning", "error"):
            self.clear()
            warn(payload["message"], payload["level"])
        if not self.enabled:
            return
        if kind == "progress":
            fraction = payload.get("fraction")
            message = printable((payload.get("message") or "")[:50])
            if fraction is None:
                bar = "working"
            else:
                filled = int(max(0.0, min(1.0, fraction)) * 20)
                bar = "[" + "#" * filled + " " * (20 - filled) + f"] {fraction * 100:3.0f}%"
            sys.stderr.write(f"\r{bar} {message:<50}")
            sys.stderr.flush()
            self._shown = True

    def clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r" + " " * 80 + "\r")
            sys.stderr.flush()
            self._shown = False


def run_job_cli(job: Job, params, on_event: Callable[[str, dict], None] | None = None,
                memory_limit: str | None = None, target: str | None = None, cluster: str | None = None,
                tasks: int | None = None) -> Any:
    """Run a job with a progress line; Ctrl+C cancels it (and exits 3). `memory_limit`:
    the job's memory budget (--memory-limit; the settings' when None). `target`: the name
    of a remote target to run it on (--target; this machine when None or "local"); the
    files the job writes there are copied back as its entry says. `cluster`: the Ray
    cluster to spread it over (--cluster), in `tasks` Ray tasks (--cluster-tasks; one per
    worker when None). `params`: the entry's parameters dataclass, never a dict. Started, and
    its result kept, as every job is (app.core.launch.start)."""
    if not isinstance(params, job.params):     # a dict's misspelt key would be found only when the job runs
        raise TypeError(f"{job.name} takes {job.params.__name__}, not {type(params).__name__}")
    if tasks is not None and not cluster:
        raise UserError("bad-option", "--cluster-tasks is for a search spread over a cluster: give --cluster too")
    progress = ProgressLine()
    where = Where.of(target, cluster)
    if tasks is not None:
        where = replace(where, tasks=tasks)
    handle = start(job, params, where, memory_limit=memory_limit, fork=True).start()

    def forward(kind: str, payload: dict) -> None:
        progress(kind, payload)
        if on_event is not None:
            on_event(kind, payload)

    interrupted: list[bool] = []

    def on_ctrl_c(_signum, _frame) -> None:
        # a cancel asked, not a KeyboardInterrupt: one raised inside reading an event from the
        # job's pipe left half a message there, the next read waited for ever and the job,
        # never ended by the cancel's grace, ran on after the test that pressed Ctrl+C
        interrupted.append(True)
        handle.cancel()

    previous = _on_sigint(on_ctrl_c)
    try:
        result = handle.wait(forward)
    except Exception:
        if interrupted:             # the job's own Ctrl+C (one process group) may end it as an error
            raise JobCancelled("cancelled by Ctrl+C") from None
        raise
    except KeyboardInterrupt:       # where no handler could be set (not the main thread)
        handle.cancel()
        for _ in handle.events():
            pass
        raise JobCancelled("cancelled by Ctrl+C") from None
    finally:
        _on_sigint(previous)
        progress.clear()
    if interrupted:                 # it finished before the cancel reached it: Ctrl+C still means no result
        raise JobCancelled("cancelled by Ctrl+C")
    return result


def _on_sigint(handler):
    """Set SIGINT's handler (None: leave it), returning the one it had; None off the main thread."""
    import signal

    if handler is None:
        return None
    try:
        return signal.signal(signal.SIGINT, handler)
    except ValueError:              # signal handlers can only be set in the main thread
        return None


def report_failure(exc: BaseException, as_json: bool) -> int:
    """Print one line (and the JSON error object when asked) and return the exit code."""
    failure = describe_failure(exc)
    if as_json:
        print_json({"error": failure.to_dict()})
    sys.stderr.write(runner_safe(f"ortune: {printable(failure.line, LINE_LIMIT)}") + "\n")
    return failure.exit_code
