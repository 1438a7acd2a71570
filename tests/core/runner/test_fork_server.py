"""On Linux a job's child is forked from a fork server (app.core.runner.child_start) that
started with the first child; it still runs in the environment and folder of the process
that starts the job now, and a second server is not started for the next child."""

import os
import sys

import pytest

from app.core.runner.child_start import start_method
from app.core.runner.process import run_job
from tests.sample_jobs import WHERE_AM_I

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux's")


def test_a_child_from_the_fork_server_has_its_starters_environment_and_folder(tmp_path, monkeypatch):
    assert start_method(fork=False) == "forkserver"
    first = run_job(WHERE_AM_I, {"value": "ORTUNE_TEST_SET_LATER"})
    monkeypatch.setenv("ORTUNE_TEST_SET_LATER", "set after the server started")
    monkeypatch.chdir(tmp_path)
    second = run_job(WHERE_AM_I, {"value": "ORTUNE_TEST_SET_LATER"})
    assert first["env"] is None and second["env"] == "set after the server started"
    assert second["cwd"] == str(tmp_path)
    assert second["ppid"] == first["ppid"] != os.getpid(), "both children come from one server"


def test_a_deep_temporary_folder_spawns(tmp_path, monkeypatch):
    deep = tmp_path / ("d" * 80)
    deep.mkdir()
    monkeypatch.setenv("TMPDIR", str(deep))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert start_method(fork=False) == "spawn"
