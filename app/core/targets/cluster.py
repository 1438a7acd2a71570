"""Jobs spread over a Ray cluster (`--cluster ADDRESS`; the optional extra
`pip install ortune[cluster]`): each task runs one ORTune job function on a worker, as it
would run here, and returns a result of the same form.

Measuring is only valid one task to a machine at a time, so every task asks for all the
CPUs of the smallest worker: two tasks never share a node's cores. The tasks are dealt to
the workers in a fixed order (by host, then node), so the same work goes to the same worker
again. The files a job names, and the folders its entry says it reads, travel through
Ray's object store and are kept on each node in a cache keyed by content hash. Which node
measured what is in each task's answer, and the workers that measured a result are named
in it (`cluster.measured_on`, what the history shows). Cancelling stops the outstanding
tasks: a running one is interrupted, its job cancelled there, and what it had measured
comes back; one not started is dropped."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import app
from app.core.jobs.entry import Job
from app.core.jobs.errors import JobCancelled, JobFailed, UserError
from app.core.targets.upload import bundle, folder_bundle, local_files, replaced

#: how long interrupted tasks have to hand back what they measured before they are ended
STOP_GRACE_S = 30.0
POLL_S = 0.2


def connect(address: str):
    """Ray, attached to the cluster at `address`; one line when it cannot be."""
    try:
        import ray
    except ImportError:
        raise UserError("no-ray", "spreading over a cluster needs Ray: pip install 'ortune[cluster]'") from None
    if not ray.is_initialized():
        _reachable(address)
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")     # failures are reported here, once
        # attached from a thread of its own (app.core.launch.start), Ray leaves this command's SIGTERM
        # handling alone, and would say so on stderr
        quiet = logging.getLogger("ray._private.worker")
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False, configure_logging=False)
        except Exception as exc:      # Ray raises ConnectionError, RuntimeError, ValueError … by cause
            raise UserError("cluster-unreachable", f"the Ray cluster at {address} cannot be reached: "
                                                   f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") \
                from None
        finally:
            quiet.setLevel(level)
    return ray


#: an HTTP/2 client's opening (the preface and an empty SETTINGS frame): Ray's head (GCS)
#: and its client server speak gRPC, which answers it at once with a SETTINGS frame
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_SETTINGS_FRAME = 4


def _reachable(address: str, timeout_s: float = 4.0) -> None:
    """Ray retries an absent head for a minute or more, and one that is not Ray at all for
    over five: ask the port first, and whether it answers as a gRPC server does."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if address == "auto" or not port.isdigit():
        return
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout_s) as sock:
            sock.settimeout(timeout_s)
            sock.sendall(_HTTP2_HELLO)
            answer = sock.recv(9)
    except socket.timeout:
        answer = b""
    except OSError as exc:
        raise UserError("cluster-unreachable", f"the Ray cluster at {address} cannot be reached: "
                                               f"{exc.strerror or exc}") from None
    if len(answer) < 4 or answer[3] != _SETTINGS_FRAME:
        raise UserError("cluster-not-ray", f"{address} does not answer like a Ray cluster: something else listens "
                                           f"there (give the head's GCS port, 6379 by default, or ray://HOST:10001)")


def workers(ray) -> list[dict]:
    """The live nodes with their CPUs, in the order work is dealt to them (by host, then node)."""
    nodes = [{"node": n["NodeID"][:12], "host": n.get("NodeManagerHostname", ""), "cpus": n["Resources"].get("CPU", 0),
              "id": n["NodeID"]} for n in ray.nodes() if n.get("Alive") and n["Resources"].get("CPU", 0) >= 1]
    return sorted(nodes, key=lambda n: (n["host"], n["id"]))


def _on(node: dict):
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    return NodeAffinitySchedulingStrategy(node["id"], soft=False)


def _probe(func: Callable[[], Any]) -> Any:
    return func()


def on_each_worker(address: str, func: Callable[[], Any], timeout_s: float = 120.0) -> list[dict]:
    """func() run once on every worker, holding no CPU (what each worker is, before work is
    dealt to it): the workers in dealing order, each with its answer."""
    ray = connect(address)
    nodes = workers(ray)
    if not nodes:
        raise UserError("cluster-empty", f"the Ray cluster at {address} has no worker with a CPU")
    remote = ray.remote(_probe)
    try:
        answers = ray.get([remote.options(num_cpus=0, max_retries=0, scheduling_strategy=_on(n)).remote(func)
                           for n in nodes], timeout=timeout_s)
    except Exception as exc:       # a lost node, a timeout, a worker that cannot load ORTune
        raise UserError("cluster-lost", f"the workers of the Ray cluster at {address} did not answer: "
                                        f"{(str(exc).splitlines() or [type(exc).__name__])[0]}") from None
    return [dict(node, answer=answer) for node, answer in zip(nodes, answers)]


def _task(job: Job, params: dict, files: dict) -> dict:
    """On the worker: write what it lacks of the files, run the job, say where it ran.
    Interrupted (ray.cancel), it cancels the job and hands back what the job returns then."""
    from app.core.runner.process import JobHandle

    cache = Path(tempfile.gettempdir()) / f"ortune-cluster-{os.getuid() if hasattr(os, 'getuid') else 0}"
    paths = {}
    folders = {}
    for local, (sha, name, contents, folder_sent) in files.items():
        folder = cache / sha
        if not (folder / name).is_file():
            staging = cache / f".{sha}.partial-{os.getpid()}"
            staging.mkdir(parents=True, exist_ok=True)
            for rel, data in contents.items():
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                (staging / rel).write_bytes(data)
            try:
                os.replace(staging, folder)
            except OSError:          # another task stored it first, or this content under another name
                for rel in contents:
                    if not (folder / rel).exists():
                        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                        os.replace(staging / rel, folder / rel)
                shutil.rmtree(staging, ignore_errors=True)
        paths[local] = str(folder) if folder_sent else str(folder / name)
        if folder_sent:
            folders[str(folder)] = local
    import ray
    where = {"version": app.__version__, "node": ray.get_runtime_context().get_node_id()[:12],
             "host": socket.gethostname()}
    handle = JobHandle(job, replaced(params, paths, job.text)).start()
    try:
        for _ in handle.events():
            pass
    except KeyboardInterrupt:               # ray.cancel: the job stops there, and says what it measured
        handle.cancel()
        for _ in handle.events():
            pass
    if isinstance(handle.error, (UserError, JobFailed, JobCancelled)):   # as a dict: Ray cannot rebuild them
        return where | {"error": dict(handle.error.to_dict(), user=isinstance(handle.error, UserError))}
    if handle.error is not None:
        raise handle.error
    return where | {"result": replaced(handle.result, {v: k for k, v in paths.items()}, job.text, folders)}


def _shipped(job: Job, parts: list[dict], scratch: Path) -> dict:
    """local path -> (sha, main name, {name: bytes}, whether it is a folder) for every file
    and folder the parts name."""
    shipped: dict[str, tuple] = {}
    for params in parts:
        for path in local_files(params, job.text):
            if path not in shipped:
                found = bundle(Path(path))
                shipped[path] = (found.sha, found.main.name, {n: p.read_bytes() for n, p, _ in found.files}, False)
        for key, files in (job.folders(params) if job.folders is not None else {}).items():
            if str(params[key]) not in shipped:
                found = folder_bundle(files, scratch / str(len(shipped)))
                shipped[str(params[key])] = (found.sha, found.main.name,
                                             {n: p.read_bytes() for n, p, _ in found.files}, True)
    return shipped


def run_spread(address: str, job: Job, parts: list[dict], ctx=None, on_answer: Callable[[dict], None] | None = None,
               places: list[int] | None = None, partial: bool = False) -> tuple[list[dict], dict]:
    """Run `job` once per parameter dict in `parts`, as Ray tasks one to a node at a time,
    part i on worker `places[i]` (default i, round the workers in dealing order).
    Returns each task's answer ({part, node, host, result}) in order, and the cluster's
    description. `on_answer(answer)`: each answer as it comes. Once `ctx` (a JobContext) is
    cancelled the outstanding tasks are stopped; the answers that came are returned, and the
    description says `cancelled` with how many tasks it stopped (with `partial`; without,
    JobCancelled is raised)."""
    ray = connect(address)
    nodes = workers(ray)
    if not nodes:
        raise UserError("cluster-empty", f"the Ray cluster at {address} has no worker with a CPU")
    cpus = min(n["cpus"] for n in nodes)
    with tempfile.TemporaryDirectory(prefix="ortune-send-") as scratch:
        files = ray.put(_shipped(job, parts, Path(scratch)))
    remote = ray.remote(_task)
    places = places or list(range(len(parts)))
    refs = {remote.options(num_cpus=cpus, max_retries=0, scheduling_strategy=_on(nodes[places[index] % len(nodes)]))
            .remote(job, params, files): index for index, params in enumerate(parts)}
    answers, pending, stop_by = {}, list(refs), None
    try:
        while pending:
            if stop_by is None and ctx is not None and ctx.cancelled:
                stop_by, told = time.monotonic() + STOP_GRACE_S, set(pending)
                for ref in pending:
                    ray.cancel(ref, force=False)
            ready, pending = ray.wait(pending, num_returns=1, timeout=POLL_S)
            for ref in ready:
                answer = _answer(ray, ref, address, stopping=stop_by is not None)
                if answer is not None:
                    answers[refs[ref]] = answer = dict(answer, part=refs[ref])
                    if on_answer is not None:
                        on_answer(answer)
            if stop_by is not None and time.monotonic() > stop_by:
                break
    finally:
        for ref in pending:         # a failure, or tasks that did not stop in time: ended, not left running
            ray.cancel(ref, force=True)
    came = [answers[index] for index in sorted(answers)]
    measured = dict.fromkeys(f"{a['host']} ({a['node']})" for a in came)
    described = {"address": address, "workers": nodes, "cpus_per_task": cpus,
                 "measured_on": f"Ray worker{'s' if len(measured) > 1 else ''} {', '.join(measured)}"}
    if stop_by is None and ctx is not None and ctx.cancelled:
        stop_by, told = time.monotonic(), set()     # cancelled once every task had answered: none to stop
    if stop_by is not None:
        if not partial:
            raise JobCancelled()
        # stopped: told to stop and it did (no answer, or one that says it was cut short); a task
        # that finished its work before the word reached it is not counted
        stopped = sum(1 for ref in told if refs[ref] not in answers
                      or (answers[refs[ref]].get("result") or {}).get("cancelled"))
        described |= {"cancelled": True, "tasks_stopped": stopped}
    return came, described


def _answer(ray, ref, address: str, stopping: bool) -> dict | None:
    """A task's answer; None for one stopped before it answered (while `stopping`); its
    failure raised as the one line it is."""
    from app.core.jobs.errors import error_from_dict

    try:
        answer = ray.get(ref)
    except Exception as exc:   # a task's own failure arrives wrapped in Ray's error
        cause = getattr(exc, "cause", None) or exc
        # a task stopped before its job could answer; Ray may wrap that in a RayTaskError, named
        # "RayTaskError(TaskCancelledError)", which a CI run then reported as a lost task
        stopped = (ray.exceptions.TaskCancelledError, ray.exceptions.WorkerCrashedError)
        if stopping and (isinstance(exc, stopped) or isinstance(cause, stopped)):
            return None
        if isinstance(cause, (UserError, JobFailed)):
            raise cause from None
        if "failed to import" in str(cause) or isinstance(cause, ImportError):
            raise UserError("target-version", f"a Ray worker of {address} cannot load this ORTune ({app.__version__}):"
                                              f" install the same version on every node") from None
        first = (str(cause).splitlines() or [type(cause).__name__])[0]
        if type(cause).__module__.startswith("ray"):     # a worker or node died, an object was lost: the cluster's
            raise UserError("cluster-lost", f"a task on the Ray cluster at {address} was lost: {first}") from None
        raise JobFailed("cluster-task", f"a task on the Ray cluster failed: {first}") from None
    if answer["version"] != app.__version__:
        raise UserError("target-version", f"a Ray worker ({answer['host']}) runs ORTune {answer['version']}, "
                                          f"this is {app.__version__}: install the same version on every node")
    if "error" in answer:
        error = error_from_dict(answer["error"])
        if stopping and isinstance(error, JobCancelled):
            return None
        raise error
    return answer
