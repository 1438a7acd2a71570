"""Every command that writes a file refuses, before it measures anything, to put it where
a FIFO, socket or folder is, even with --force: the thing there is left as it was."""

import os
import socket
import stat

import pytest

from tests import models


@pytest.mark.parametrize("command", [
    ["tune", "m.onnx", "--budget-trials", "2", "--save-best", "OUT.json"],
    ["profile", "m.onnx", "--runs", "2", "--out", "OUT.json", "--force"],
    ["convert", "fp16", "m.onnx", "-o", "OUT.onnx", "--force", "--no-fidelity", "--no-speed"],
], ids=["tune --save-best", "profile --out", "convert -o"])
@pytest.mark.parametrize("kind", ["FIFO", "socket"])
def test_an_output_is_never_put_on_a_fifo_or_socket(ortune, tmp_path, command, kind):
    models.save(models.mlp(), tmp_path / "m.onnx")
    command = [part.replace("OUT", kind) for part in command]
    name = next(part for part in command if part.startswith(kind))
    target = tmp_path / name
    listener = None
    if kind == "FIFO":
        os.mkfifo(target)
    else:
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(target))
    try:
        done = ortune(*command, cwd=tmp_path, timeout=60)
        assert done.code == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "only ever replaces a regular file" in done.stderr
        assert (stat.S_ISFIFO if kind == "FIFO" else stat.S_ISSOCK)(os.lstat(target).st_mode)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["m.onnx", name])
    finally:
        if listener is not None:
            listener.close()
