"""A job's process never outlives the one that started it.

Two guards: the child ends when its control pipe reaches end-of-file (process.py), and on
Linux the kernel kills it the moment its parent dies (PR_SET_PDEATHSIG), which works even
while the child is deep in native code that holds the interpreter lock and keeps the
pipe's watcher thread from running."""

from __future__ import annotations

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int, through_server: bool = False) -> None:
    """Ask the kernel to kill this process when its parent dies; end now if it already has.
    `through_server`: forked by the fork server (app.core.runner.child_start), whose death kills
    this process and which ends when the job's starter `parent_pid` does."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return           # no prctl here: the pipe's watcher still ends the child
    if through_server:
        try:
            os.kill(parent_pid, 0)       # the starter is gone: the server ends, and so does this
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            pass
    elif os.getppid() != parent_pid:   # the parent died before the request was made
        os._exit(1)
