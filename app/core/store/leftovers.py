"""Staging files of jobs that were killed: noted while they exist, swept when the next job
starts.

A job writes its output beside the target under a hidden name that holds its process id
(a `.partial` staging folder, a `.profiling` trace prefix) and removes it when it ends.
A job killed outright (SIGKILL, a crash, the machine's memory killer) cannot, so each of
those names is also noted in the data folder; the next job removes the ones whose
process is gone. Noting and sweeping never fail a job: a data folder that cannot be used
only means nothing is swept."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import uuid
from pathlib import Path

from app.core.store.paths import data_dir


def _folder() -> Path:
    return data_dir() / "partial"


@contextlib.contextmanager
def noted(path: Path):
    """Note `path` (a staging folder, or the prefix of a job's staging files) while it may exist."""
    marker = _folder() / f"{os.getpid()}-{uuid.uuid4().hex}"
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(str(Path(path).absolute()), encoding="utf-8")
    except OSError:
        marker = None
    try:
        yield
    finally:
        if marker is not None:
            with contextlib.suppress(OSError):
                marker.unlink()


def sweep() -> list[Path]:
    """Remove what the killed jobs left; returns what was removed."""
    try:
        markers = [m for m in _folder().iterdir() if m.name.split("-", 1)[0].isdigit()]
    except OSError:
        return []
    removed: list[Path] = []
    for marker in markers:
        pid = int(marker.name.split("-", 1)[0])
        if pid == os.getpid() or _running(pid):
            continue
        with contextlib.suppress(OSError, ValueError):
            removed += _remove(Path(marker.read_text(encoding="utf-8")), pid)
            marker.unlink()
    return removed


def _running(pid: int) -> bool:
    """Alive, not a zombie (a killed job whose new parent has not reaped it yet)."""
    import psutil  # only when there is something to check

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:     # someone else's process: leave its files alone
        return True


def _remove(path: Path, pid: int) -> list[Path]:
    """Everything beside `path` whose name starts with its name, if that name holds `pid`."""
    if f".{pid}." not in path.name or not path.name.startswith("."):
        return []             # not a name a job makes: never touch it
    removed = []
    for stray in path.parent.glob(f"{glob.escape(path.name)}*"):
        if stray.is_dir() and not stray.is_symlink():
            shutil.rmtree(stray, ignore_errors=True)
        else:
            stray.unlink(missing_ok=True)
        removed.append(stray)
    return removed

