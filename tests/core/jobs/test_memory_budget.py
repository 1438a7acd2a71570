"""Every job child runs within a memory budget: past it the parent ends the job with a
message that names the inputs, instead of the system's out-of-memory killer."""

import time

import pytest

from app.core.jobs.errors import UserError
from app.core.jobs.memory import budget_bytes, parse_memory_limit, rss_bytes
from app.core.runner.process import JobHandle
from app.core.store.settings import Settings, load_settings, save_settings
from tests.sample_jobs import ECHO, HOG


def test_a_job_past_its_budget_is_ended_with_a_message_naming_its_inputs():
    started = time.monotonic()
    handle = JobHandle(HOG, {"kib": 600 * 1024}, memory_limit="200M").start()
    with pytest.raises(UserError) as caught:
        handle.wait()
    assert caught.value.kind == "over-memory-budget"
    message = caught.value.message
    assert "more than 0.20 GiB, its memory budget, with inputs x [1, 4096]" in message
    assert "--memory-limit" in message and "\n" not in message
    assert time.monotonic() - started < 20          # ended by the budget, not by the job's own end
    assert not handle._process.is_alive()


def test_a_job_within_its_budget_ends_normally():
    handle = JobHandle(ECHO, {"value": 1}, memory_limit="2G").start()
    assert handle.wait()["echo"] == 1
    assert handle.memory_budget == 2 << 30


def test_the_default_budget_is_a_share_of_the_memory_available_now():
    handle = JobHandle(ECHO, {"value": 1}).start()
    handle.wait()
    available = budget_bytes("100%")
    assert 0.5 * available < handle.memory_budget / 0.75 < 1.5 * available


def test_a_bad_limit_ends_the_job_before_it_starts():
    handle = JobHandle(ECHO, {"value": 1}, memory_limit="lots").start()
    with pytest.raises(UserError, match="--memory-limit expects a size such as 4G"):
        handle.wait()
    assert handle.pid is None


@pytest.mark.parametrize("text, parsed", [
    ("4G", (4 << 30, "B")), ("512M", (512 << 20, "B")), ("1.5g", (1.5 * (1 << 30), "B")),
    ("2GiB", (2 << 30, "B")), ("75%", (75.0, "%")), (" 100 % ", (100.0, "%")), ("20000000", (20e6, "B"))])
def test_limits_are_read_in_the_units_people_write(text, parsed):
    assert parse_memory_limit(text) == parsed


@pytest.mark.parametrize("text", ["lots", "", "0%", "101%", "1K", "-4G", "4X"])
def test_a_limit_that_is_no_size_is_refused_naming_the_flag(text):
    with pytest.raises(UserError, match="--memory-limit"):
        parse_memory_limit(text)


def test_the_setting_holds_the_default_and_a_damaged_one_falls_back(tmp_path):
    path = tmp_path / "settings.json"
    assert load_settings(path).memory_limit == "75%"
    save_settings(Settings(memory_limit="3G"), path)
    assert load_settings(path).memory_limit == "3G"
    save_settings(Settings(memory_limit="plenty"), path)
    assert load_settings(path).memory_limit == "75%"


def test_resident_memory_is_read_for_this_process_and_none_for_a_gone_one():
    assert rss_bytes() > 10 << 20
    assert rss_bytes(2 ** 22 + 12345) is None


def test_a_sessions_limit_is_the_budget_of_the_job_that_runs_with_it(tmp_path):
    from app.core.session.jobs import SMOKE_RUN
    from tests import models

    path = models.save(models.tiny_add(), tmp_path / "tiny.onnx")
    handle = JobHandle(SMOKE_RUN, {"path": str(path), "session": {"memory_limit": "3G"}}).start()
    handle.wait()
    assert handle.memory_budget == 3 << 30
    given = JobHandle(SMOKE_RUN, {"path": str(path), "session": {"memory_limit": "3G"}}, memory_limit="2G").start()
    given.wait()
    assert given.memory_budget == 2 << 30, "a limit the caller gives wins over the session's"


def test_a_bad_limit_in_a_session_is_refused_naming_the_setting():
    from app.core.session.config import SessionConfig

    with pytest.raises(UserError, match="memory_limit expects a size such as 4G"):
        SessionConfig.from_dict({"memory_limit": "lots"}).validate()
