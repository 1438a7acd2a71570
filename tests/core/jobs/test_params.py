"""One check of a job's parameters serves the window, presets and the command line."""

from dataclasses import dataclass

import pytest

from app.core.measure.runs import RunSettings
from app.core.bench.jobs import BenchParams
from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.session.config import SessionConfig


@dataclass
class Sample(Params):
    name: str
    count: int = setting(1, minimum=1, flag="--count")
    rate: float | None = None
    mode: str = setting("a", choices=("a", "b"))
    tags: list[str] = setting(factory=list)


@pytest.mark.parametrize("data, words", [
    ({}, "name is required"),
    ({"name": 5}, "name expects text"),
    ({"name": "x", "count": "3"}, "count expects a whole number"),
    ({"name": "x", "count": True}, "count expects a whole number"),
    ({"name": "x", "count": 0}, "count must be at least 1"),
    ({"name": "x", "count": 10 ** 20}, "far too large"),
    ({"name": "x", "rate": float("nan")}, "rate expects a number"),
    ({"name": "x", "mode": "c"}, "mode must be one of a, b"),
    ({"name": "x", "tags": "t"}, "tags expects a list"),
    ({"name": "x", "tags": [1]}, r"tags\[0\] expects text"),
    ({"name": "x", "size": 1}, "unknown setting"),
])
def test_wrong_values_get_one_line_that_names_the_setting(data, words):
    with pytest.raises(UserError, match=words):
        Sample.from_dict(data)


def test_text_from_the_command_line_is_read_as_the_field_type():
    sample = Sample.from_dict({"name": "x", "count": " 4", "rate": "0.5"}, text=True)
    assert (sample.count, sample.rate) == (4, 0.5)
    with pytest.raises(UserError, match="--count expects a whole number, not 'abc'"):
        Sample.from_dict({"name": "x", "count": "abc"}, text=True)


def test_nested_settings_name_their_place():
    with pytest.raises(UserError, match="run.iterations must be at least 1"):
        BenchParams.from_dict({"path": "m.onnx", "run": {"iterations": 0}})
    with pytest.raises(UserError, match="--warmup expects a whole number"):
        RunSettings.from_dict({"warmup": "many"}, text=True)


def test_a_preset_inside_parameters_is_a_session_config():
    params = BenchParams.from_dict({"path": "m.onnx", "session": {"intra_op_num_threads": 2}})
    assert isinstance(params.session, SessionConfig) and params.session.intra_op_num_threads == 2
    assert params.to_dict()["session"] == params.session.to_dict()
