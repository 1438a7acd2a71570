"""A job's flags are made from its parameters dataclass: each field that names a flag gets it,
with the field's help, its default and its limits, and a changed field changes the flag."""

import argparse
import dataclasses

import pytest

from app.cli.main import build_parser
from app.cli.param_args import add_param_arguments, params_from_args
from app.core.bench.jobs import CompareParams
from app.core.jobs.errors import UserError
from app.core.jobs.params import Params, setting
from app.core.optimize.params import OptimizeParams
from app.core.session.fidelity_policy import GivenBounds
from app.core.tune.jobs import TuneParams


def _actions(command: str) -> dict:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {option: action for action in sub._actions for option in action.option_strings}


@pytest.mark.parametrize("command, params", [("optimize", OptimizeParams), ("tune", TuneParams),
                                             ("compare", CompareParams), ("convert", GivenBounds)])
def test_every_flagged_field_is_a_flag_with_its_help(command, params):
    actions = _actions(command)
    for field in dataclasses.fields(params):
        flag = field.metadata.get("flag")
        if flag and field.default_factory is dataclasses.MISSING:
            assert actions[flag].help.startswith(field.metadata["help"]), flag


@dataclasses.dataclass
class Sample(Params):
    seconds: float = setting(2.0, minimum=0.5, flag="--seconds", metavar="S", help="how long")
    fast: bool = setting(False, flag="--fast", help="go fast")
    kept: bool = setting(True, flag="--keep", help="keep what was made")
    items: list[int] = setting(factory=list, flag="--items")     # a list's flag is the command's own


def test_the_flags_are_the_fields():
    parser = argparse.ArgumentParser()
    add_param_arguments(parser, Sample)
    text = " ".join(parser.format_help().split())
    assert "--seconds S how long (default 2)" in text and "--fast go fast" in text and "--no-keep" in text
    assert "--items" not in text
    assert params_from_args(parser.parse_args([]), Sample) == Sample()
    assert params_from_args(parser.parse_args(["--seconds", "3", "--fast", "--no-keep"]), Sample) == \
        Sample(seconds=3.0, fast=True, kept=False)


def test_a_value_past_a_fields_limit_is_refused_naming_the_flag():
    parser = argparse.ArgumentParser()
    add_param_arguments(parser, OptimizeParams)
    given = {"model": "m.onnx", "out_dir": "out"}
    assert params_from_args(parser.parse_args([]), OptimizeParams, given) == OptimizeParams(**given)
    with pytest.raises(UserError, match="--screen-seconds must be at least 0.05"):
        params_from_args(parser.parse_args(["--screen-seconds", "0.01"]), OptimizeParams, given)
    assert params_from_args(parser.parse_args(["--no-tune", "--fresh"]), OptimizeParams, given).tune is False
