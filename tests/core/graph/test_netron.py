"""Open in Netron: its server in a job child, on this machine only, until cancelled; one
line naming the package where it is not installed."""

from __future__ import annotations

import urllib.request

import pytest

from app.core.graph import netron as hand_off
from app.core.graph.jobs import NETRON
from app.core.jobs.errors import JobCancelled, UserError
from app.core.jobs.protocol import JobContext
from app.core.runner.process import JobHandle
from tests import models


def test_netron_serves_the_model_until_the_job_is_cancelled(tmp_path):
    pytest.importorskip("netron")          # an optional extra: ortune[netron]
    path = models.save(models.cnn(), tmp_path / "cnn.onnx")
    handle = JobHandle(NETRON, {"path": str(path), "browse": False}).start()
    pages = []
    for kind, payload in handle.events():
        if kind == "data" and payload["kind"] == "serving":
            url = payload["payload"]["url"]
            assert url.startswith("http://localhost:")
            with urllib.request.urlopen(url, timeout=20) as reply:
                pages.append(reply.status)
            handle.cancel()
    assert pages == [200]
    assert isinstance(handle.error, JobCancelled)


def test_without_netron_the_job_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(hand_off, "netron_installed", lambda: False)
    with pytest.raises(UserError) as info:
        hand_off.serve_until_cancelled(tmp_path / "any.onnx", False, JobContext())
    assert info.value.message == "Open in Netron needs the netron package: pip install netron"
