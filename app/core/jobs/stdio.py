"""Capturing what native code and libraries write to stdout/stderr (ORT logs there), and
picking ONNX Runtime's own warnings out of it, so they reach the user as ORTune warnings
instead of raw, coloured lines."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from typing import Callable

from app.core.text import printable
from app.core.ort_messages import ort_text, strip_ansi

#: one line of ONNX Runtime's log: "2026-12-01 12:22:07.3 [W:onnxruntime:tag, file.cc:12 Function] message"
_ORT_LINE = re.compile(r"^\S+ \S+ \[([VIWEF]):onnxruntime:[^,\]]*,[^\]]*\] (.*)$")
#: the log line ORT writes for a failed run: the exception that follows says the same
_RUN_FAILED = "Non-zero status code returned while running"

_relay: Callable[[str], None] | None = None
_relayed: set[str] = set()


class CapturedText:
    text = ""


def ort_warnings(text: str) -> list[str]:
    """ONNX Runtime's warning and error log lines in `text`, each as one plain sentence."""
    found = []
    for line in strip_ansi(text).splitlines():
        match = _ORT_LINE.match(line.strip())
        if match and match.group(1) in "WEF" and _RUN_FAILED not in match.group(2):
            message = ort_text(match.group(2)).strip()
            if message:
                found.append(f"ONNX Runtime: {message}")
    return found


def relay_ort_warnings(warn: Callable[[str], None] | None) -> None:
    """From now on, what capture_output catches is written to stderr again once its block
    ends (a job's process, whose stderr is the jobs log), and ONNX Runtime's warnings in it
    go to `warn`, each once: ORT logs while it creates a session, which is always captured."""
    global _relay
    _relay = warn
    _relayed.clear()


def _pass_on(text: str) -> None:
    with contextlib.suppress(OSError):
        # the names ORT logs are the model's: the log file gets them escaped
        os.write(2, printable(text, None, lines=True).encode("utf-8"))
    for message in ort_warnings(text):
        if message not in _relayed:
            _relayed.add(message)
            _relay(message)


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
            raw = sink.read()
            captured.text = strip_ansi(raw.decode("utf-8", "replace"))
            if _relay is not None and raw:
                _pass_on(captured.text)



@contextlib.contextmanager
def unrelayed():
    """ONNX Runtime's warnings inside the block are not passed on: a trial whose result may be
    dropped (one of two fusers' models) must not warn the user about a model they never get."""
    global _relay
    saved, _relay = _relay, None
    try:
        yield
    finally:
        _relay = saved
