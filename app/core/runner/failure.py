"""One way to fail: any exception a job (or a command) ends with becomes its kind, one line
for the user, the log file that holds the details, and the command line's exit code. The
window and the command line both show what this says."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from app.core.jobs.errors import JobCancelled, JobFailed, UserError, is_runtime_error

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
    from app.core.store.paths import write_error_log

    details = exc.traceback if isinstance(exc, JobFailed) and exc.traceback else None
    message = exc.message if isinstance(exc, JobFailed) else f"{type(exc).__name__}: {exc}"
    try:
        log = write_error_log(details or "".join(traceback.format_exception(exc)))
    except OSError:
        log = None
    return Failure("internal", message, 1, log)


def signal_name(number: int) -> str:
    """SIGKILL for 9, and so on; "signal N" for a number the system does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def describe_exit(code: int | None) -> str:
    """One sentence for a job process that ended without saying how (a crash, a kill)."""
    if code is None:
        return "the job's process stopped answering"
    if code < 0:
        name = signal_name(-code)
        if -code == getattr(signal, "SIGKILL", 9):
            return (f"the job's process was killed ({name}); this is most often the system "
                    "running out of memory")
        return f"the job's process crashed ({name})"
    if sys.platform == "win32" and code >= 0xC0000000:
        return f"the job's process crashed (Windows exception 0x{code:08X})"
    return f"the job's process ended unexpectedly with exit code {code}"


def error_info(exc: BaseException, params=None) -> dict:
    """What a job's process sends its parent about the exception it ended with."""
    if is_runtime_error(exc):
        from app.core.ort_messages import is_shape_problem, ort_text
        where = ""
        named = next((getattr(params, key) for key in ("path", "input", "model")
                      if isinstance(getattr(params, key, None), str)), None)
        if named:
            where = os.path.basename(named) + ": "
        text = ort_text(str(exc))
        hint = " Set the input shapes with --dim/--shape or in the Session tab." if is_shape_problem(text) else ""
        return {"kind": "runtime-error", "user": True,
                "message": f"{where}ONNX Runtime refused to run it: {text.rstrip('.')}.{hint}"}
    if isinstance(exc, UserError):
        return {"kind": exc.kind, "message": exc.message, "user": True}
    if isinstance(exc, JobCancelled):
        return {"kind": "cancelled", "message": exc.message}
    if isinstance(exc, MemoryError):
        return {"kind": "out-of-memory", "message": "the job ran out of memory",
                "traceback": traceback.format_exc()}
    return {"kind": "internal", "message": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc()}
