"""One way to fail: any exception a job (or a command) ends with becomes its kind, one line
for the user, the log file that holds the details, and the command line's exit code. The
window and the command line both show what this says."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.jobs.errors import JobCancelled, JobFailed, UserError

#: failures whose message says all there is: no traceback to keep
_PLAIN_FAILURES = ("crashed", "out-of-memory")


@dataclass(frozen=True)
class Failure:
    kind: str               # a UserError's kind, "cancelled", "crashed", "out-of-memory" or "internal"
    message: str            # one line, as the user reads it
    exit_code: int          # 2 bad input, 3 cancelled, 1 anything else
    log: Path | None = None  # where the traceback went (internal errors only)

    @property
    def line(self) -> str:
        """What the user reads, in one line: an internal error says so and names its log."""
        if self.kind != "internal":
            return self.message
        return f"internal error: {self.message}" + (f"; the details are in {self.log}" if self.log else "")

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message}


def describe_failure(exc: BaseException) -> Failure:
    """What to tell the user about `exc`. An internal error's traceback (the child's, or
    this process's own) is written to a new log file first."""
    if isinstance(exc, UserError):
        return Failure(exc.kind, exc.message, exc.exit_code)
    if isinstance(exc, JobCancelled):
        return Failure("cancelled", "cancelled", exc.exit_code)
    if isinstance(exc, JobFailed) and exc.kind in _PLAIN_FAILURES:
        return Failure(exc.kind, exc.message, 1)
    import traceback

    from app.core.store.paths import write_error_log

    details = exc.traceback if isinstance(exc, JobFailed) and exc.traceback else None
    message = exc.message if isinstance(exc, JobFailed) else f"{type(exc).__name__}: {exc}"
    try:
        log = write_error_log(details or "".join(traceback.format_exception(exc)))
    except OSError:
        log = None
    return Failure("internal", message, 1, log)
