"""Capturing what native code and libraries write to stdout/stderr (ORT logs there)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile

from app.core.units import strip_ansi


class CapturedText:
    text = ""


@contextlib.contextmanager
def capture_output():
    """Redirect file descriptors 1 and 2 into one buffer for the duration of the block."""
    captured = CapturedText()
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    with tempfile.TemporaryFile(mode="w+b") as sink:
        for fd in saved:
            os.dup2(sink.fileno(), fd)
        try:
            yield captured
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, copy in saved.items():
                os.dup2(copy, fd)
                os.close(copy)
            sink.seek(0)
            captured.text = strip_ansi(sink.read().decode("utf-8", "replace"))
