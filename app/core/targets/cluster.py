"""Jobs spread over a Ray cluster (`--cluster ADDRESS`; the optional extra
`pip install ortune[cluster]`): each task runs one ORTune job function on a worker, as it
would run here, and returns a result of the same form.

Measuring is only valid one task to a machine at a time, so every task asks for all the
CPUs of the smallest worker: two tasks never share a node's cores. The files a job names
travel through Ray's object store and are kept on each node in a cache keyed by content
hash. Which node measured what is in each task's answer, and the workers that measured
a result are named in it (`cluster.measured_on`, what the history shows)."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any

import app
from app.core.jobs.entry import Job
from app.core.jobs.errors import JobFailed, UserError
from app.core.targets.upload import bundle, local_files, replaced


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
        try:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False, configure_logging=False)
        except Exception as exc:      # Ray raises ConnectionError, RuntimeError, ValueError … by cause
            raise UserError("cluster-unreachable", f"the Ray cluster at {address} cannot be reached: "
                                                   f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") \
                from None
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
    """The live nodes with their CPUs."""
    return [{"node": n["NodeID"][:12], "host": n.get("NodeManagerHostname", ""), "cpus": n["Resources"].get("CPU", 0)}
            for n in ray.nodes() if n.get("Alive") and n["Resources"].get("CPU", 0) >= 1]


def _task(job: Job, params: dict, files: dict) -> dict:
    """On the worker: write what it lacks of the files, run the job, say where it ran."""
    from app.core.runner.process import run_job

    cache = Path(tempfile.gettempdir()) / f"ortune-cluster-{os.getuid() if hasattr(os, 'getuid') else 0}"
    paths = {}
    for local, (sha, name, contents) in files.items():
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
        paths[local] = str(folder / name)
    import ray
    where = {"version": app.__version__, "node": ray.get_runtime_context().get_node_id()[:12],
             "host": socket.gethostname()}
    try:
        result = run_job(job, replaced(params, paths, job.text))
    except (UserError, JobFailed) as exc:    # as a dict: Ray cannot rebuild these exceptions on the caller
        return where | {"error": dict(exc.to_dict(), user=isinstance(exc, UserError))}
    return where | {"result": replaced(result, {v: k for k, v in paths.items()}, job.text)}


def run_spread(address: str, job: Job, parts: list[dict]) -> tuple[list[dict], dict]:
    """Run `job` once per parameter dict in `parts`, as Ray tasks one to a node at a time.
    Returns each task's answer ({node, host, result}) in order, and the cluster's description."""
    ray = connect(address)
    nodes = workers(ray)
    if not nodes:
        raise UserError("cluster-empty", f"the Ray cluster at {address} has no worker with a CPU")
    cpus = min(n["cpus"] for n in nodes)
    shipped: dict[str, tuple] = {}
    for params in parts:
        for path in local_files(params, job.text):
            if path not in shipped:
                found = bundle(Path(path))
                shipped[path] = (found.sha, found.main.name, {n: p.read_bytes() for n, p, _ in found.files})
    files = ray.put(shipped)
    remote = ray.remote(_task).options(num_cpus=cpus, scheduling_strategy="SPREAD", max_retries=0)
    try:
        answers = ray.get([remote.remote(job, params, files) for params in parts])
    except Exception as exc:   # a task's own failure arrives wrapped in Ray's error
        cause = getattr(exc, "cause", None) or exc
        if isinstance(cause, (UserError, JobFailed)):
            raise cause from None
        if "failed to import" in str(cause) or isinstance(cause, ImportError):
            raise UserError("target-version", f"a Ray worker of {address} cannot load this ORTune ({app.__version__}):"
                                              f" install the same version on every node") from None
        first = (str(cause).splitlines() or [type(cause).__name__])[0]
        if type(cause).__module__.startswith("ray"):     # a worker or node died, an object was lost: the cluster's
            raise UserError("cluster-lost", f"a task on the Ray cluster at {address} was lost: {first}") from None
        raise JobFailed("cluster-task", f"a task on the Ray cluster failed: {first}") from None
    for answer in answers:
        if "error" in answer and answer["version"] == app.__version__:
            from app.core.jobs.errors import error_from_dict
            raise error_from_dict(answer["error"])
        if answer["version"] != app.__version__:
            raise UserError("target-version", f"a Ray worker ({answer['host']}) runs ORTune {answer['version']}, "
                                              f"this is {app.__version__}: install the same version on every node")
    measured = dict.fromkeys(f"{a['host']} ({a['node']})" for a in answers)
    return answers, {"address": address, "workers": nodes, "cpus_per_task": cpus,
                     "measured_on": f"Ray worker{'s' if len(measured) > 1 else ''} {', '.join(measured)}"}
