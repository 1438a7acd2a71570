"""A disk made full by a test: ENOSPC raised where a writer writes, and the one message
ORTune must say for it."""

import errno
import os

#: how ORTune names a full disk: one line, the folder and what the write needed
NO_SPACE = r"^no space left on /.*: [\d.,]+ MB needed"


def full(*_args, **_kwargs):
    """A writer (os.write, onnx.save_model, Path.mkdir…) on a disk with no space left."""
    raise OSError(errno.ENOSPC, "No space left on device")


class _FullFile:
    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False

    def write(self, _text):
        full()


def fill_every_opened_file(monkeypatch) -> None:
    """Every file os.fdopen opens (a temporary file renamed into place) finds the disk full
    at its first write; undo with monkeypatch.undo()."""
    monkeypatch.setattr(os, "fdopen", lambda fd, *args, **kwargs: (os.close(fd), _FullFile())[1])
