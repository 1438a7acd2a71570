"""What `ortune worker` lets a request touch: the worker runs for whoever holds a key that
reaches it (even one restricted to `command="ortune worker"`), so a request may name only
the jobs whose entry allows a target, and only paths inside the worker's cache or the job's
own scratch folder; and what a worker that died mid-upload left in that cache is swept by
the next one."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from app.core.jobs.entry import Job
from app.core.jobs.errors import UserError

#: a bundle being received: `.<sha>.partial-<pid of the worker writing it>`
PARTIAL = re.compile(r"^\.[0-9a-f]+\.partial-(\d+)$")
#: a job's scratch folder under outputs/: `job-<pid of its worker>-<random>`
SCRATCH = re.compile(r"^job-(\d+)-")


def refused(message: str) -> UserError:
    return UserError("target-refused", f"this worker refuses the request: {message}")


def check_request(job: Job, params: Any, cache: Path, scratch: list[Path]) -> None:
    """Refuse a job a target may not run, and any path in its parameters that resolves
    outside the cache or this job's scratch folders (outputs: only in scratch)."""
    if not job.on_target:
        raise refused(f"{job.name!r} is not a job a target runs (only measuring jobs are)")
    inside = [Path(os.path.realpath(cache))]
    scratch = [Path(os.path.realpath(folder)) for folder in scratch]
    given = params if isinstance(params, dict) else {}
    for key in job.outputs:
        value = given.get(key)
        if value and not _within(str(value), scratch):
            raise refused(f"{key} {value!r} is not in this job's scratch folder")
    for value in _strings(given, job.text):
        if _names_a_path(value) and not _within(value, inside + scratch):
            raise refused(f"{value!r} is outside its cache")


def _strings(value: Any, text: tuple[str, ...]):
    """Every string of the parameters but those under the keys in `text` (labels, Job.text)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in text:
                yield from _strings(item, text)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, text)
    elif isinstance(value, str) and value:
        yield value


def _names_a_path(value: str) -> bool:
    """A parameter that names a file: it has a separator, or something by that name exists."""
    if "/" in value or os.sep in value or "\0" in value:
        return True
    try:
        return os.path.lexists(value)
    except (OSError, ValueError):
        return True


def _within(value: str, folders: list[Path]) -> bool:
    try:
        real = Path(os.path.realpath(value))
    except (OSError, ValueError):
        return False
    return any(real == folder or real.is_relative_to(folder) for folder in folders)


def sweep(cache: Path) -> None:
    """Remove the partial uploads and scratch folders of workers that are gone. Another
    worker running now keeps its own (its process is alive and older than its files); a
    process that only reuses a dead worker's id is younger than them."""
    for folder, pattern in ((cache, PARTIAL), (cache / "outputs", SCRATCH)):
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            match = pattern.match(entry.name)
            if match and not _writer_alive(int(match.group(1)), entry):
                shutil.rmtree(entry, ignore_errors=True)


def _writer_alive(pid: int, entry: Path) -> bool:
    import psutil
    try:
        started = psutil.Process(pid).create_time()
        return started <= entry.stat().st_mtime + 1.0
    except (psutil.Error, OSError):
        return False
