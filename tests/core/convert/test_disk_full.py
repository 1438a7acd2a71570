"""A full disk is named as such ("no space left on …: N MB needed"), not as the writer's own
words (ONNX Runtime says "Protobuf serialization failed"), and nothing is left behind. The
disk is made full by the test: free space reported as none, or ENOSPC raised by the writer."""

import errno
import shutil
from collections import namedtuple

import onnx
import pytest

from app.core.convert.jobs import MAKE
from app.core.jobs.errors import UserError
from app.core.session import create
from tests import models

Usage = namedtuple("Usage", "total used free")


def _convert(kind, source, output):
    return MAKE({"kind": kind, "input": str(source), "output": str(output), "speed_s": 0}, None)


@pytest.fixture
def full_disk(monkeypatch):
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(real(path).total, real(path).total, 0))


def test_optimize_into_a_full_disk_says_so(tmp_path, monkeypatch, full_disk):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    real = create.create_session

    def failing(path, config, customize=None):
        if customize is None:
            return real(path, config)
        raise UserError("session-failed", "ONNX Runtime could not load the model: Protobuf serialization failed")
    monkeypatch.setattr(create, "create_session", failing)
    with pytest.raises(UserError, match=r"^no space left on /.*: [\d.,]+ MB needed$"):
        _convert("optimize", source, tmp_path / "out.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.onnx"]


def test_a_variant_bigger_than_the_free_space_is_refused_before_writing(tmp_path, monkeypatch, full_disk):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    monkeypatch.setattr(onnx, "save_model", lambda *a, **k: pytest.fail("written to a full disk"))
    with pytest.raises(UserError, match=r"^no space left on /.*: [\d.,]+ MB needed$"):
        _convert("fp16", source, tmp_path / "out.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.onnx"]


def test_a_disk_that_fills_while_writing_is_named(tmp_path, monkeypatch):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")

    def filling(model, path, *args, **kwargs):
        with open(path, "wb") as out:
            out.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(onnx, "save_model", filling)
    with pytest.raises(UserError, match=r"^no space left on /.*: [\d.,]+ MB needed$"):
        _convert("fp16", source, tmp_path / "out.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.onnx"]


def test_a_preset_saved_to_a_full_disk_says_so(tmp_path, monkeypatch):
    import os

    from app.core.session.config import SessionConfig

    class FullFile:
        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            return False

        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fdopen", lambda fd, *args, **kwargs: (os.close(fd), FullFile())[1])
    with pytest.raises(UserError, match=r"^no space left on /.*: [\d.,]+ MB needed$"):
        SessionConfig().save(tmp_path / "preset.json")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
