"""`ortune(...)` runs a command as a user would and returns its exit code, stdout and stderr.

By default it calls the command line's main(argv) in this process (an interpreter per call cost
half the suite's time); `ortune(..., in_process=False)` starts `python -m app` for what only a
real process shows: exit codes set by the interpreter, signals, imports, a crash in native code.
The window's commands always get a real process."""

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


class CliResult:
    def __init__(self, code: int, stdout: str, stderr: str):
        self.code = code
        self.stdout = stdout
        self.stderr = stderr

    def json(self):
        return json.loads(self.stdout)


def run_in_process(args: list[str], cwd) -> CliResult:
    """main(argv) with its streams captured, in cwd, with the command line's per-run state reset."""
    from app.cli import printing
    from app.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    printing._warned.clear()          # one command's warnings, as in a fresh process
    before = os.getcwd()
    os.chdir(cwd or ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exc:       # as the interpreter would turn it into a code
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(before)
        printing._warned.clear()
    return CliResult(int(code or 0), out.getvalue(), err.getvalue())


def run_process(args: list[str], cwd, timeout: float) -> CliResult:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or ROOT, env=env)
    return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def ortune():
    """Run `ortune ARGS`; returns code, stdout, stderr (see the module's docstring)."""
    def run(*args, timeout=300, cwd=None, in_process=True):
        argv = [str(arg) for arg in args]
        from app.__main__ import _wants_window
        # the window (`ortune gui …`) gets a process of its own, and so does a command that joins a
        # Ray cluster: Ray connects a process once, so a second address in this one would be ignored
        if in_process and not _wants_window(argv) and "--cluster" not in argv:
            return run_in_process(argv, cwd)
        return run_process(argv, cwd, timeout)
    return run
