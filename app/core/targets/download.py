"""Files a job wrote on a target, copied back here: a converted model and the external
data beside it, put in place the way a conversion's output is (app.core.model.output:
staged beside the target, then moved in; never onto a device, a FIFO, a folder or the
source's own files; an existing file only with force)."""

from __future__ import annotations

import base64
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.model.output import Staging, check_replaceable


def fetch(handle, remote: str, local: Path, force: bool) -> dict[str, str]:
    """Ask the worker behind `handle` for `remote` and write it (and its companions) at `local`.
    Returns each file's path there -> its path here (what a result names)."""
    handle._send({"get": remote})
    listing = handle._expect("files")["files"]
    with Staging(local) as staging:
        current = None
        for item in listing:
            check_replaceable(local.parent / _local_name(item["name"], Path(remote).name, local.name), force)
        while True:
            message = handle._read()
            if "error" in message:
                raise UserError("target-copy", f"the output could not be copied back: {message['error']['message']}")
            if "file" in message:
                if current is not None:
                    current.close()
                name = _local_name(Path(str(message["file"])).name, Path(remote).name, local.name)
                current = open(staging.folder / name, "wb")
            elif "chunk" in message and current is not None:
                current.write(base64.b64decode(message["chunk"]))
            elif "end" in message:
                break
        if current is not None:
            current.close()
        staging.commit(force)
    there = remote.rsplit("/", 1)[0]
    return {f"{there}/{item['name']}": str(local.parent / _local_name(item["name"], Path(remote).name, local.name))
            for item in listing}


def _local_name(name: str, remote_main: str, local_main: str) -> str:
    """The remote file's name here: the model takes the local name; its data file follows it."""
    return local_main + name[len(remote_main):] if name.startswith(remote_main) else name
