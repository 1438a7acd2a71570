"""The entry point in a process that has no stdout/stderr, as a windowed Windows program has."""

import os
import subprocess
import sys

from tests.cli.conftest import ROOT

PROGRAM = """
import sys
from app.__main__ import _give_windowless_process_streams
before = (sys.stdout is None, sys.stderr is None)
_give_windowless_process_streams()
from app.core.jobs.stdio import capture_output
with capture_output() as captured:
    print("line from a library")
with open(sys.argv[1], "w") as report:
    report.write(f"{before} {captured.text.strip()}")
"""


def _close_stdout_and_stderr() -> None:
    os.close(1)
    os.close(2)


def test_a_process_without_streams_still_captures_output(tmp_path):
    report = tmp_path / "report.txt"
    subprocess.run([sys.executable, "-c", PROGRAM, str(report)], cwd=ROOT, timeout=120,
                   preexec_fn=_close_stdout_and_stderr, check=True)
    assert report.read_text() == "(True, True) line from a library"
