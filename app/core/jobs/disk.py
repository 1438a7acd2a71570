"""A full disk, named as such: "no space left on MOUNT: N MB needed" (a writer's own
message, such as ONNX Runtime's "Protobuf serialization failed" or SQLite's "database or
disk is full", never says where or how much)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from pathlib import Path

from app.core.jobs.errors import UserError


def _mount_point(folder: Path) -> str:
    path = os.path.realpath(folder)
    while not os.path.ismount(path):
        path = os.path.dirname(path)
    return path


def no_space(folder: Path, needed: int) -> UserError:
    """The one line for a full disk, naming where and how much."""
    return UserError("no-space", f"no space left on {_mount_point(folder)}: {max(needed, 1) / 1e6:,.1f} MB needed")


def check_space(folder: Path, needed: int) -> None:
    """Refuse before writing `needed` bytes into `folder` when its disk has less free."""
    if shutil.disk_usage(folder).free < needed:
        raise no_space(folder, needed)


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


@contextlib.contextmanager
def named_when_full(folder: Path, needed):
    """A full disk met inside the block raised as no_space(folder, needed()); `needed` a
    number of bytes or a function giving it (asked only then)."""
    try:
        yield
    except OSError as exc:
        if is_disk_full(exc):
            raise no_space(folder, needed() if callable(needed) else needed) from None
        raise
