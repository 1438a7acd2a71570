"""Files a job wrote on a target, copied back here: a converted model and the external
data beside it, put in place the way a conversion's output is (app.core.model.output:
staged beside the target, then moved in; never onto a device, a FIFO, a folder or the
source's own files; an existing file only with force); or a folder the job wrote (the
folder optimize ships), each of its files put in place the same way."""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.model.output import Staging, check_replaceable


def fetch(handle, remote: str, local: Path, force: bool) -> dict[str, str]:
    """Ask the worker behind `handle` for `remote` and write it (and its companions) at `local`.
    Returns each file's path there -> its path here (what a result names)."""
    handle._send({"get": remote})
    answer = handle._expect("files")
    listing = answer["files"]
    if answer.get("folder"):
        return _fetch_folder(handle, remote, listing, local, force)
    with Staging(local) as staging:
        for item in listing:
            check_replaceable(local.parent / _local_name(item["name"], Path(remote).name, local.name), force)
        _receive(handle, lambda sent: staging.folder / _local_name(Path(sent).name, Path(remote).name, local.name))
        staging.commit(force)
    there = remote.rsplit("/", 1)[0]
    return {f"{there}/{item['name']}": str(local.parent / _local_name(item["name"], Path(remote).name, local.name))
            for item in listing}


def _receive(handle, path_for) -> None:
    """Write the files the worker streams (a "file" message naming each, its "chunk"s, then
    "end") to `path_for(the name it sent)`; an "error" message is the one line raised."""
    current = None
    try:
        while True:
            message = handle._read()
            if "error" in message:
                raise UserError("target-copy", f"the output could not be copied back: {message['error']['message']}")
            if "file" in message:
                if current is not None:
                    current.close()
                current = open(path_for(str(message["file"])), "wb")
            elif "chunk" in message and current is not None:
                current.write(base64.b64decode(message["chunk"]))
            elif "end" in message:
                break
    finally:
        if current is not None:
            current.close()


def _local_name(name: str, remote_main: str, local_main: str) -> str:
    """The remote file's name here: the model takes the local name; its data file follows it."""
    return local_main + name[len(remote_main):] if name.startswith(remote_main) else name


def _inside(folder: Path, name: str) -> Path:
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()) or path == folder.resolve():
        raise UserError("target-copy", f"the target sent a file outside the output folder: {name!r}")
    return folder / name


def _fetch_folder(handle, remote: str, listing: list[dict], local: Path, force: bool) -> dict[str, str]:
    """Every file of the folder, received into a private folder beside `local`, then each
    moved into place (an existing one only with force)."""
    local.mkdir(parents=True, exist_ok=True)
    names = [str(item["name"]) for item in listing]
    for name in names:
        check_replaceable(_inside(local, name), force)
    staging = Path(tempfile.mkdtemp(prefix=f".{local.name}.{os.getpid()}.", suffix=".partial", dir=local.parent))
    def place(name: str) -> Path:
        if name not in names:
            raise UserError("target-copy", f"the target sent a file it had not listed: {name!r}")
        path = _inside(staging, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    try:
        _receive(handle, place)
        for name in names:
            final = _inside(local, name)
            final.parent.mkdir(parents=True, exist_ok=True)
            check_replaceable(final, force)
            os.replace(staging / name, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {remote: str(local)} | {f"{remote}/{name}": str(local / name) for name in names}
