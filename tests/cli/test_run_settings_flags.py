"""The run settings' flags are made from RunSettings: its defaults, its limits and its words,
so the command line cannot take a value the measuring core refuses, nor default otherwise."""

import argparse

import pytest

from app.cli.session_args import add_run_arguments, run_settings_from_args
from app.core.measure.runs import RunSettings
from app.core.jobs.errors import UserError
from app.core.session.fields import thread_limit


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    return parser


def _settings(argv) -> RunSettings:
    return run_settings_from_args(_parser().parse_args(argv))


def test_no_flag_gives_the_cores_defaults():
    assert _settings([]) == RunSettings()


def test_each_flag_sets_its_field():
    assert _settings(["--warmup", "3", "--iterations", "50", "--duration", "0.001", "--concurrency", "2"]) == \
        RunSettings(warmup=3, iterations=50, duration_s=0.001, concurrency=2)


@pytest.mark.parametrize("argv, words", [
    (["--concurrency", str(thread_limit() + 1)], f"--concurrency must be at most {thread_limit():,}"),
    (["--duration", "0.0005"], "--duration must be at least 0.001"),
    (["--iterations", "0"], "--iterations must be at least 1"),
    (["--warmup", "many"], "--warmup expects a whole number"),
])
def test_a_value_past_the_cores_limit_is_refused_naming_the_flag(argv, words):
    with pytest.raises(UserError, match=words):
        _settings(argv)


def test_the_help_says_the_cores_defaults():
    text = _parser().format_help()
    assert "(default 10)" in text and "(default 200)" in text and "(default 1)" in text
