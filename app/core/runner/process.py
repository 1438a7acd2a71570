"""Runs a job in a child process and streams its events back over a pipe.

Why a child: a native crash or an out-of-memory in ORT or a converter kills the
child, not the window; each model's GPU memory is freed when its process ends; the
measuring process does not share a GIL with the GUI; and cancel always works.

How: on Linux a job's child is forked from a fork server, a clean process started once
(by the window or the command line) that has imported numpy, onnx and ONNX Runtime and
never runs a session, so a child starts in milliseconds instead of the second or more that
starting an interpreter and importing them again costs; the child takes the environment and
working folder of the process that starts it, not the server's. The command line, which has
no other thread and has loaded none of the heavy libraries when its job starts, forks itself
instead (see child_start.fork_is_safe). Elsewhere (Windows, macOS, a frozen build) each child is a fresh
interpreter.
Either way the child ends with os._exit once its outcome is sent, skipping the teardown
that would free a large model object by object.

Protocol (child -> parent, one pickled tuple a message):
    ("event", kind, payload)   kind in progress | log | data
    ("result", value)
    ("error", {"kind", "message", "user", "traceback"})
Parent -> child, on a second pipe: "cancel", or ("message", payload) for a job that
takes commands while it runs (JobHandle.send; the job reads them with ctx.receive()).

Memory: the child gets a budget when it starts (app.core.jobs.memory); the parent samples
its resident memory while it reads events and ends it past the budget. A job's
("data", {"kind": "inputs", "payload": {"inputs": rows, ...}}) event says which inputs it runs on,
so that message can name them.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable, Iterator

from app.core.jobs.entry import Job
from app.core.jobs.errors import JobCancelled, JobFailed, UserError, error_from_dict
from app.core.jobs.memory import budget_bytes, over_budget_message, rss_bytes
from app.core.jobs.protocol import JobContext, Waitable
from app.core.jobs.stdio import relay_ort_warnings
from app.core.runner.failure import describe_exit, error_info
from app.core.runner.child_start import context, leave_fork_server, start_method
from app.core.runner.lifeline import die_with_parent
from app.core.store import leftovers

#: seconds a child gets to stop by itself after a cancel before it is ended
CANCEL_GRACE_S = 3.0
_START_LOCK = threading.Lock()
Event = tuple  # (kind, payload)


def _run_in_context(job: Job, params, ctx: JobContext) -> tuple:
    try:
        return ("result", job.func(params, ctx))
    except BaseException as exc:  # every failure becomes a message; nothing escapes
        return ("error", error_info(exc, params))


def _child_main(job: Job, params, events_conn, control_conn, parent_pid: int, parent_ends=(),
                memory_budget=None, starter=None) -> None:
    """`starter`: (environment, working folder) of the process that started the job, for a
    child forked from the fork server, which has the server's own."""
    die_with_parent(parent_pid, through_server=starter is not None)
    if starter is not None:
        leave_fork_server()
        environment, folder = starter
        os.environ.clear()
        os.environ.update(environment)
        with contextlib.suppress(OSError):
            os.chdir(folder)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)   # a forked child keeps the command's handler
    for conn in parent_ends:  # a forked child holds copies of the parent's ends too
        conn.close()
    send_lock = threading.Lock()

    def send(message: tuple) -> None:
        with send_lock:
            events_conn.send(message)

    ctx = JobContext(lambda kind, payload: send(("event", kind, payload)), memory_budget)
    _quiet_native_output(lambda message: ctx.log(message, "warning"))

    def listen() -> None:
        while True:
            try:
                message = control_conn.recv()
            except (EOFError, OSError):
                # The parent is gone: nobody will read what we make.
                os._exit(1)
            if message == "cancel":
                ctx.cancel()
            elif isinstance(message, tuple) and message[0] == "message":
                ctx.deliver(message[1])

    threading.Thread(target=listen, name="ortune-control", daemon=True).start()
    outcome = _run_in_context(job, params, ctx)
    try:
        send(outcome)
    except Exception as exc:  # a result that does not pickle is a bug worth naming
        send(("error", {"kind": "internal", "message": f"the job's result could not be sent: {exc}",
                        "traceback": traceback.format_exc()}))
    events_conn.close()
    # The job is over and its files are in place: end here rather than tear the interpreter
    # down, which frees every object one by one (a tenth of a second or more after a big model).
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(0)


@contextlib.contextmanager
def _main_module_hidden():
    """Keep multiprocessing from re-running the caller's __main__ in the child.

    A job's function is pickled by its module path, so the child never needs the
    parent's main script; re-importing it would run any unguarded top-level code (a test script,
    an embedding application) a second time."""
    main = sys.modules.get("__main__")
    if main is None or getattr(sys, "frozen", False):
        yield
        return
    saved = {key: main.__dict__[key] for key in ("__file__", "__spec__") if key in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def _quiet_native_output(warn: Callable[[str], None]) -> None:
    """Send what libraries print (ORT's log, warnings) to the jobs log file, and ORT's own
    warnings to `warn` (app.core.jobs.stdio.relay_ort_warnings).

    Nothing may reach the parent's stdout (the CLI's --json) or clutter its stderr
    (the CLI promises one line per error); ORTUNE_CHILD_OUTPUT=inherit keeps stderr."""
    relay_ort_warnings(warn)
    keep_stderr = os.environ.get("ORTUNE_CHILD_OUTPUT") == "inherit"
    try:
        if keep_stderr:
            os.dup2(2, 1)
            return
        from app.core.store.paths import log_dir
        folder = log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / "jobs.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    except OSError:
        pass


class JobHandle(Waitable):
    """One running job. Iterate `events()` to drive it; `result` holds the outcome."""

    def __init__(self, job: Job, params=None, isolate: bool | None = None, fork: bool = False,
                 memory_limit: str | None = None):
        """`params`: the job's Params (checked once, by the one start function, for a job a
        user starts; the entry checks them again as it reads them in the child), or a dict
        read into them here (a part a job starts); wrong ones end the job at once with the
        UserError that says why. `isolate`: in a child process (the entry's
        choice unless a test asks otherwise). `fork`: start the child by forking where that
        is safe (see child_start.fork_is_safe), which saves starting a second interpreter.
        `memory_limit`: the child's budget ("4G", "75%"; when None, the one its params' session
        asks for, else the settings')."""
        self.job = job
        self.memory_limit = memory_limit
        self.memory_budget: int | None = None
        self._inputs: list | None = None      # the rows of the job's latest "inputs" event
        self._next_sample = 0.0
        self._notes: list[Event] = []         # events of the parent's own, yielded before the job's
        self.isolate = job.child if isolate is None else isolate
        self.fork = fork
        self.result: Any = None
        self.error: Exception | None = None
        self.done = False
        self._cancel_requested_at: float | None = None
        self._process = None
        self._events_conn = None
        self._control_conn = None
        self._queue: queue.Queue | None = None
        self._ctx: JobContext | None = None
        self.params = params if isinstance(params, job.params) else None
        if self.params is None:
            try:
                self.params = job.make_params(params)
            except UserError as exc:
                self._finish(error=exc)

    # starting --------------------------------------------------------------
    def start(self) -> "JobHandle":
        if self.done:
            return self
        leftovers.sweep()    # what killed jobs left behind
        try:
            # a job run here that starts children of its own hands a limit it was given on to them
            limit = self.memory_limit or _session_limit(self.params)
            if self.isolate or limit:
                self.memory_budget = budget_bytes(limit or self._limit_setting())
        except UserError as exc:
            self._finish(error=exc)
            return self
        if self.isolate:
            method = start_method(self.fork)
            ctx = context(method)
            events_recv, events_send = ctx.Pipe(duplex=False)
            control_recv, control_send = ctx.Pipe(duplex=False)
            parent_ends = (events_recv, control_send) if method == "fork" else ()
            starter = (dict(os.environ), os.getcwd()) if method == "forkserver" else None
            self._process = ctx.Process(
                target=_child_main,
                args=(self.job, self.params, events_send, control_recv, os.getpid(), parent_ends,
                      self.memory_budget, starter),
                name=f"ortune-job {self.job.name}", daemon=True)
            with _START_LOCK, _main_module_hidden():
                self._process.start()
            events_send.close()
            control_recv.close()
            self._events_conn = events_recv
            self._control_conn = control_send
        else:
            self._queue = queue.Queue()
            self._ctx = JobContext(lambda kind, payload: self._queue.put(("event", kind, payload)), self.memory_budget)
            threading.Thread(target=lambda: self._queue.put(
                _run_in_context(self.job, self.params, self._ctx)),
                name=f"ortune-job {self.job.name}", daemon=True).start()
        return self

    def _limit_setting(self) -> str:
        """The settings' memory limit; a settings file that had to be moved aside is said as a warning."""
        from app.core.store.settings import load_settings
        settings = load_settings()
        if settings.set_aside_note:
            self._notes.append(("log", {"level": "warning", "message": settings.set_aside_note, "time": time.time()}))
        return settings.memory_limit

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    # cancelling ------------------------------------------------------------
    def cancel(self) -> None:
        """Ask the job to stop; a child that does not stop in time is ended."""
        if self.done or self._cancel_requested_at is not None:
            return
        self._cancel_requested_at = time.monotonic()
        if self._ctx is not None:
            self._ctx.cancel()
        elif self._control_conn is not None:
            try:
                self._control_conn.send("cancel")
            except (OSError, BrokenPipeError):
                pass

    # commanding ------------------------------------------------------------
    def send(self, message: Any) -> None:
        """Hand `message` (picklable) to the running job, which reads it with ctx.receive().

        A child that has died cannot take it; reading its events then says why."""
        if self.done:
            return
        if self._ctx is not None:
            self._ctx.deliver(message)
        elif self._control_conn is not None:
            try:
                self._control_conn.send(("message", message))
            except (OSError, BrokenPipeError):
                pass

    def _enforce_cancel(self) -> None:
        if self._cancel_requested_at is None or self._process is None:
            return
        waited = time.monotonic() - self._cancel_requested_at
        if waited > CANCEL_GRACE_S and self._process.is_alive():
            self._process.terminate()
        if waited > CANCEL_GRACE_S + 2 and self._process.is_alive():
            self._process.kill()

    # reading ---------------------------------------------------------------
    def _receive(self, timeout: float):
        if self._queue is not None:
            try:
                return self._queue.get(timeout=timeout)
            except queue.Empty:
                return None
        try:
            if self._events_conn.poll(timeout):
                return self._events_conn.recv()
        except (EOFError, OSError):
            self._process.join(5)
            return ("died",)
        if not self._process.is_alive():
            # The child may have sent its last words just before exiting.
            try:
                if self._events_conn.poll(0):
                    return self._events_conn.recv()
            except (EOFError, OSError):
                pass
            return ("died",)
        return None

    def events(self, poll_s: float = 0.05) -> Iterator[Event]:
        """Yield (kind, payload) events until the job ends, then set result/error."""
        while self._notes:
            yield self._notes.pop(0)
        while not self.done:
            self._enforce_cancel()
            self._enforce_budget()
            if self.done:
                break
            message = self._receive(poll_s)
            if message is None:
                continue
            tag = message[0]
            if tag == "event":
                if message[1] == "data" and message[2].get("kind") == "inputs":
                    self._inputs = (message[2].get("payload") or {}).get("inputs")
                yield message[1], message[2]
            elif tag == "result":
                self._finish(result=message[1])
            elif tag == "error":
                self._finish(error=error_from_dict(message[1]))
            elif tag == "died":
                if self._cancel_requested_at is not None:
                    self._finish(error=JobCancelled())
                else:
                    code = self._process.exitcode if self._process else None
                    self._finish(error=JobFailed("crashed", describe_exit(code)))

    def _enforce_budget(self) -> None:
        """End the child once it holds more than its budget (sampled every 50 ms)."""
        if self.memory_budget is None or self._process is None or time.monotonic() < self._next_sample:
            return
        self._next_sample = time.monotonic() + 0.05
        held = rss_bytes(self._process.pid)
        if held is not None and held > self.memory_budget and self._process.is_alive():
            self._process.kill()
            self._finish(error=UserError("over-memory-budget", over_budget_message(self.memory_budget, self._inputs)))

    def _finish(self, result: Any = None, error: Exception | None = None) -> None:
        self.result, self.error, self.done = result, error, True
        if self._process is not None:
            self._process.join(5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(5)
            for conn in (self._events_conn, self._control_conn):
                conn.close()
            if self._process.exitcode != 0:
                leftovers.sweep()   # a child ended by a signal could not remove its staging files: here, at once


def _session_limit(params) -> str | None:
    """The limit the job's session asks for (SessionConfig.memory_limit): it travels with the
    session into every process a comparison, sweep or tuning run starts for it."""
    return getattr(getattr(params, "session", None), "memory_limit", None) or None




def run_job(job: Job, params=None, on_event: Callable[[str, dict], None] | None = None,
            isolate: bool | None = None, memory_limit: str | None = None) -> Any:
    """Run a job to its end and return its result (raises UserError/JobCancelled/JobFailed)."""
    return JobHandle(job, params, isolate=isolate, memory_limit=memory_limit).start().wait(on_event)


def run_child(job: Job, params, ctx: JobContext, on_event: Callable[[str, dict], None] | None = None,
              memory_limit: str | None = None) -> Any:
    """Run one job in a fresh process from a job that orchestrates others (tune, convert).

    Cancelling `ctx` cancels the child; its result is returned, its error raised."""
    handle = JobHandle(job, params, memory_limit=memory_limit).start()
    remove = ctx.on_cancel(handle.cancel)
    try:
        return handle.wait(on_event)
    finally:
        remove()
