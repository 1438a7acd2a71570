"""The errors a job can end with, and how each one is shown to a user.

A `UserError` means the input was wrong (a bad file, a bad option, a provider that
cannot start): the message is shown as it is, in one line, and the CLI exits 2.
Anything else that escapes a job is an internal error: the user sees one line that
names the log file holding the traceback, and the CLI exits 1.
"""

from __future__ import annotations


class UserError(Exception):
    """The user's input cannot be used; `message` says what and where."""

    exit_code = 2

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message}


class JobCancelled(Exception):
    """The user cancelled the job."""

    exit_code = 3
    kind = "cancelled"

    def __init__(self, message: str = "cancelled"):
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message}


class JobFailed(Exception):
    """A job ended without a result: an internal error or a child process that died."""

    exit_code = 1

    def __init__(self, kind: str, message: str, traceback: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.traceback = traceback

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message}


def is_runtime_error(exc: BaseException) -> bool:
    """ONNX Runtime's own exceptions: it refused the model, its inputs or its settings."""
    return type(exc).__module__.startswith("onnxruntime")


def error_from_dict(info: dict) -> Exception:
    """Rebuild the exception a child process reported."""
    kind = info.get("kind", "internal")
    message = info.get("message", "")
    if kind == "cancelled":
        return JobCancelled(message)
    if info.get("user"):
        return UserError(kind, message)
    return JobFailed(kind, message, info.get("traceback", ""))
