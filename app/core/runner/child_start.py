"""How a job's child process starts (app.core.runner.process): forked from the command line
itself where that is safe, forked from a fork server on Linux, a fresh interpreter elsewhere.

The fork server is a clean process started once, with the first child, that imports numpy,
onnx and ONNX Runtime and never runs a session; forking a child from it takes milliseconds
where starting an interpreter and importing them again takes a second or more (which is
most of a measured process's start). A frozen build and other systems spawn."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
import threading

#: libraries that start native threads of their own (invisible to threading): a process
#: that has loaded one must not fork
_THREADED_LIBRARIES = ("onnxruntime", "numpy", "PySide6", "torch")
#: what the fork server imports once for every child it forks
_PRELOAD = ["numpy", "onnx", "onnxruntime", "app.core.runner.process"]


def fork_is_safe() -> bool:
    """Forking copies one thread only: safe on Linux in a process that runs no other
    thread and has loaded no library that keeps threads of its own (the command line
    before its job, not the window)."""
    return (sys.platform.startswith("linux") and threading.active_count() == 1
            and not any(name in sys.modules for name in _THREADED_LIBRARIES))


def leave_fork_server() -> None:
    """A forked child holds the server's "alive" pipe, which keeps the server (and so, through
    the parent-death signal, the child) alive after the starter dies: let go of it, and of the
    server, so the children this job starts come from a server of its own."""
    from multiprocessing import forkserver

    server = forkserver._forkserver
    with contextlib.suppress(AttributeError, OSError, TypeError):
        os.close(server._forkserver_alive_fd)
    for name in ("_forkserver_alive_fd", "_forkserver_address", "_forkserver_pid"):
        setattr(server, name, None)


def start_method(fork: bool) -> str:
    if fork and fork_is_safe():
        return "fork"
    if sys.platform.startswith("linux") and not getattr(sys, "frozen", False) and _socket_fits():
        return "forkserver"
    return "spawn"


def _socket_fits() -> bool:
    """The server listens on a socket under the temporary folder, whose path Linux caps at 107
    bytes (multiprocessing adds about 35); a job whose temporary folder is deep (a target's
    scratch) spawns instead."""
    import tempfile

    return len(os.fsencode(tempfile.gettempdir())) <= 70


def context(method: str):
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(_PRELOAD)    # read when the server starts, with the first child
    return ctx
