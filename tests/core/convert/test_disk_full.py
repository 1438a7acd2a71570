"""A full disk is named as such ("no space left on …: N MB needed"), not as the writer's own
words (ONNX Runtime says "Protobuf serialization failed"), and nothing is left behind. The
disk is made full by the test: free space reported as none, or ENOSPC raised by the writer."""

import shutil
from collections import namedtuple

import onnx
import pytest

from app.core.convert.jobs import MAKE
from app.core.jobs.errors import UserError
from app.core.session import create
from tests import models
from tests.disk_full import NO_SPACE, fill_every_opened_file, full

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
    with pytest.raises(UserError, match=NO_SPACE + "$"):
        _convert("optimize", source, tmp_path / "out.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.onnx"]


def test_a_variant_bigger_than_the_free_space_is_refused_before_writing(tmp_path, monkeypatch, full_disk):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")
    monkeypatch.setattr(onnx, "save_model", lambda *a, **k: pytest.fail("written to a full disk"))
    with pytest.raises(UserError, match=NO_SPACE + "$"):
        _convert("fp16", source, tmp_path / "out.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.onnx"]


def test_a_disk_that_fills_while_writing_is_named(tmp_path, monkeypatch):
    source = models.save(models.cnn(), tmp_path / "cnn.onnx")

    def filling(model, path, *args, **kwargs):
        with open(path, "wb") as out:
            out.write(b"half")
        full()
    monkeypatch.setattr(onnx, "save_model", filling)
    with pytest.raises(UserError, match=NO_SPACE + "$"):
        _convert("fp16", source, tmp_path / "out.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.onnx"]


def test_a_preset_saved_to_a_full_disk_says_so(tmp_path, monkeypatch):
    from app.core.session.config import SessionConfig
    fill_every_opened_file(monkeypatch)
    with pytest.raises(UserError, match=NO_SPACE + "$"):
        SessionConfig().save(tmp_path / "preset.json")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
