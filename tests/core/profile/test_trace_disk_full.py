"""A trace written to a full disk is named as such ("no space left on …: N MB needed"), in
one line, with nothing left behind and a trace already there untouched. The disk is made
full by the test: ENOSPC raised where the trace is written."""

import shutil

import pytest

from app.core.jobs.errors import UserError
from app.core.jobs.protocol import JobContext
from app.core.profile import profile
from app.core.profile.jobs import COPY_TRACE, PROFILE
from tests import models
from tests.disk_full import NO_SPACE as DISK_FULL, full

NO_SPACE = DISK_FULL + "$"


def test_a_profile_whose_trace_finds_the_diskfull_says_so_and_leaves_nothing(tmp_path, monkeypatch):
    model = models.save(models.mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "traces"
    out.mkdir()
    monkeypatch.setattr(profile, "_publish", full)
    with pytest.raises(UserError, match=NO_SPACE) as caught:
        PROFILE({"model": str(model), "runs": 2, "out": str(out / "mlp.json")}, JobContext())
    assert caught.value.kind == "no-space"
    assert list(out.iterdir()) == []


def test_a_trace_copied_to_afull_disk_says_so_and_keeps_the_file_there(tmp_path, monkeypatch):
    source = tmp_path / "trace.json"
    source.write_text("[]" * 1000)
    target = tmp_path / "out" / "copy.json"
    target.parent.mkdir()
    target.write_text("keep me")

    def filling(src, dst, *args, **kwargs):
        with open(dst, "w") as half:
            half.write("[")
        full()
    monkeypatch.setattr(shutil, "copyfile", filling)
    with pytest.raises(UserError, match=NO_SPACE):
        COPY_TRACE({"source": str(source), "target": str(target)}, JobContext())
    assert [p.name for p in target.parent.iterdir()] == ["copy.json"] and target.read_text() == "keep me"
