"""The one function that starts a job entry anywhere: here (a child process, or a thread
for a job that only starts children), on a saved ssh target, or spread over a Ray cluster.
The window and the command line both start every job through it, and it is the one place
a finished result is kept in the history, as the entry's Records say (once a run; a
target keeps its own copy in its own history, as a run started there).

Every handle it gives has the face of app.core.runner.process.JobHandle: start, events,
cancel, send, wait, result, error, done, pid."""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from app.core.jobs.entry import CLUSTER, HERE, TARGET, Job
from app.core.jobs.errors import JobCancelled, JobFailed, UserError
from app.core.jobs.params import Params
from app.core.jobs.protocol import Waitable


@dataclass(frozen=True)
class Where:
    """Where a run goes: HERE, TARGET (`name`: a saved target) or CLUSTER (`name`: the Ray
    head's address; `tasks`: how many, one per worker when None)."""
    place: str = HERE
    name: str = ""
    tasks: int | None = None

    @classmethod
    def of(cls, target: str | None = None, cluster: str | None = None) -> "Where":
        """From a command line's or a window's choice: a cluster address, a target's name,
        or this machine (no name, or "local")."""
        if cluster:
            return cls(CLUSTER, cluster)
        if target and target != "local":
            return cls(TARGET, target)
        return cls()

    def fitting(self, entry: Job) -> "Where":
        """This place, or here for an entry that does not run here: a window's chosen target
        takes the jobs that may run there, and the rest stay on this machine."""
        return self if self.place in entry.runs else HERE_


HERE_ = Where()


#: why an entry is refused at a place it does not run (every entry runs here)
NOT_THERE = {TARGET: "{} runs on this machine only, not on a target", CLUSTER: "{} is not spread over a cluster"}


def start(entry: Job, params=None, where: Where = HERE_, *, memory_limit: str | None = None, fork: bool = False,
          warn: Callable[[str], None] | None = None) -> "Run":
    """A handle on a run of `entry` with `params` (its Params, or a dict read into them)
    `where` says; call its start(). The parameters are checked here, once for every place,
    and the entry's own checks (Job.before) made before anything is sent anywhere: wrong
    ones, or a place the entry does not run, end the run at once with the UserError that
    says why. `fork`: a child started here forks where that is safe (the command line).
    `warn`: gets the history's warning lines as they come."""
    try:
        params = ready(entry, params, where.place)
    except UserError as exc:
        return Run(entry, _Refused(exc), warn)
    if where.place == TARGET:
        from app.core.targets.handle import RemoteHandle
        from app.core.targets.store import get_target
        try:
            return Run(entry, RemoteHandle(get_target(where.name), entry, params, memory_limit=memory_limit), warn)
        except UserError as exc:              # a target that is not (or no longer) saved
            return Run(entry, _Refused(exc), warn)
    if where.place == CLUSTER:
        return Run(entry, _Spread(entry, params, where.name, where.tasks), warn)
    from app.core.runner.process import JobHandle   # multiprocessing is not needed before the first job
    return Run(entry, JobHandle(entry, params, fork=fork, memory_limit=memory_limit), warn)


def ready(entry: Job, params, place: str):
    """The entry's parameters for a run at `place`, checked, after the entry's own checks for
    that place; a UserError says what is wrong."""
    if place not in entry.runs:
        raise UserError("bad-option", NOT_THERE[place].format(entry.name))
    params = entry.make_params(params)
    if entry.before is not None:
        entry.before(params, place)
    return params


def run(entry: Job, params=None, where: Where = HERE_, on_event: Callable[[str, dict], None] | None = None,
        **options) -> Any:
    """Run to the end and return the result (raises UserError/JobCancelled/JobFailed)."""
    return start(entry, params, where, **options).start().wait(on_event)


class Run(Waitable):
    """A run with the JobHandle face: the place's handle driven, and its result kept in the
    history as the entry says once it has succeeded, before anyone reads it."""

    def __init__(self, entry: Job, handle, warn: Callable[[str], None] | None = None):
        self.entry, self.handle, self.warn = entry, handle, warn
        self.result: Any = None
        self.error: Exception | None = None
        self.done = False

    @property
    def params(self):
        return getattr(self.handle, "params", None)

    @property
    def pid(self) -> int | None:
        return getattr(self.handle, "pid", None)

    def start(self) -> "Run":
        self.handle.start()
        return self

    def cancel(self) -> None:
        self.handle.cancel()

    def send(self, message: Any) -> None:
        self.handle.send(message)

    def events(self, poll_s: float = 0.05) -> Iterator[tuple[str, dict]]:
        if self.done:
            return
        yield from self.handle.events(poll_s)
        if self.done:             # another reader of the events (a drain after Ctrl+C) ended it
            return
        result, error = self.handle.result, self.handle.error
        if error is None and self.entry.records is not None:
            from app.core.store.recording import keep
            try:
                result = keep(self.entry.records, self.handle.params, result, self.warn)
            except Exception as exc:     # a result is never lost to its filing: say so, keep it
                message = f"the result could not be stored in the history ({type(exc).__name__}: {exc})"
                if self.warn is not None:
                    self.warn(message)
                if isinstance(result, dict):
                    result.update(history_id=None, history_warnings=[message])
        self.result, self.error, self.done = result, error, True


class _Refused:
    """A run that cannot start: it ends at once with its error."""

    def __init__(self, error: Exception):
        self.error, self.result, self.done, self.params, self.pid = error, None, True, None, None

    def start(self) -> "_Refused":
        return self

    def cancel(self) -> None:
        pass

    def send(self, message: Any) -> None:
        pass

    def events(self, poll_s: float = 0.05) -> Iterator[tuple[str, dict]]:
        return iter(())


class _Spread:
    """The entry's `spread` over a Ray cluster, run in a thread of its own from start();
    its events (the spread's context's) are read from it, and cancel cancels that context:
    the spread stops its outstanding tasks and returns what was measured."""

    def __init__(self, entry: Job, params: Params, address: str, tasks: int | None):
        from app.core.jobs.protocol import JobContext

        self.entry, self.address, self.tasks = entry, address, tasks
        self.result: Any = None
        self.error: Exception | None = None
        self.done, self.pid = False, None
        self._events: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self.ctx = JobContext(lambda kind, payload: self._events.put((kind, payload)))
        self.params = params            # checked by start()

    def start(self) -> "_Spread":
        if not self.done and self._thread is None:
            self._events.put(("progress", {"fraction": None, "message": f"spread over the Ray cluster at "
                                                                        f"{self.address}", "time": time.time()}))
            self._thread = threading.Thread(target=self._run, name=f"ortune-spread {self.entry.name}", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self.result = self.entry.spread(self.entry, self.params, self.address, self.tasks, self.ctx)
        except (UserError, JobCancelled, JobFailed) as exc:
            self.error = exc
        except Exception as exc:     # every failure is a message, as a child's is
            self.error = JobFailed("internal", f"{type(exc).__name__}: {exc}")
        finally:
            self._events.put(None)

    def cancel(self) -> None:
        if not self.done:
            self.ctx.cancel()

    def send(self, message: Any) -> None:
        pass

    def events(self, poll_s: float = 0.05) -> Iterator[tuple[str, dict]]:
        """Read again after an interruption (Ctrl+C), it goes on where it was."""
        while not self.done:
            if self._thread is None:
                self.start()
            try:
                item = self._events.get(timeout=poll_s)
            except queue.Empty:
                continue
            if item is None:
                self.done = True
            else:
                yield item
