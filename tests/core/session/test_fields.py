"""Every session setting is described once, in app.core.session.fields: the preset's fields
take their defaults, ranges and choices from it, the command line its flags and their help,
and a wrong value gets one message, from a preset and from a flag alike."""

import argparse
import dataclasses
import json
import re

import pytest

from app.core.jobs.errors import UserError
from app.core.session.config import SessionConfig
from app.core.session.fields import FIELD, SESSION_FIELDS
from app.core.session.input_spec import FeedSpec

#: the one setting with no flag: Find working inputs finds it, nobody types it
FOUND_NOT_SET = {"inputs.probed"}


def _dataclass_fields():
    yield from ((f.name, f) for f in dataclasses.fields(SessionConfig) if f.name != "inputs")
    yield from ((f"inputs.{f.name}", f) for f in dataclasses.fields(FeedSpec))


def _parser(fields=None, monkeypatch=None):
    from app.cli import session_args

    if fields is not None:
        monkeypatch.setattr(session_args, "SESSION_FIELDS", fields)
    parser = argparse.ArgumentParser()
    session_args.add_session_arguments(parser)
    return parser


def _from_flags(argv, parser=None):
    from app.cli.session_args import session_config_from_args
    return session_config_from_args((parser or _parser()).parse_args(argv))


def test_every_preset_field_is_a_row_of_the_table_and_nothing_else_is():
    names = [name for name, _ in _dataclass_fields()]
    assert sorted(names) == sorted(FIELD), "a field described outside the table, or a row without its field"
    for name, field in _dataclass_fields():
        row = FIELD[name]
        assert field.metadata["about"] is row, f"{name} takes its description from somewhere else"
        assert (field.metadata["minimum"], field.metadata["maximum"]) == (row.minimum, row.maximum), name
        assert field.metadata["flag"] == row.flag and field.metadata["choices"] == row.values, name


def test_the_defaults_are_the_tables():
    preset = SessionConfig().to_dict()
    for row in SESSION_FIELDS:
        place, key = (preset["inputs"], row.name[len("inputs."):]) if row.name.startswith("inputs.") else (preset, row.name)
        wanted = row.factory() if row.factory else row.default
        if row.name == "providers":
            wanted = [{"name": name, "options": {}} for name in wanted]
        assert place[key] == wanted, row.name


def test_every_field_has_one_flag_whose_help_is_the_fields_help():
    actions = {option: action for action in _parser()._actions for option in action.option_strings}
    flags = [row.flag for row in SESSION_FIELDS if row.flag]
    assert len(flags) == len(set(flags))
    assert {row.name for row in SESSION_FIELDS if not row.flag} == FOUND_NOT_SET
    for row in SESSION_FIELDS:
        if row.flag:
            assert actions[row.flag].help.replace("%%", "%") == row.help, row.flag
            assert row.help and row.label, row.name


def test_a_changed_row_changes_the_flag_that_sets_its_field(monkeypatch):
    renamed = [dataclasses.replace(row, flag="--block-base") if row.name == "dynamic_block_base" else row
               for row in SESSION_FIELDS]
    parser = _parser(renamed, monkeypatch)
    assert _from_flags(["--block-base", "4"], parser).dynamic_block_base == 4
    with pytest.raises(SystemExit):
        parser.parse_args(["--dynamic-block-base", "4"])


def _wrong(row):
    """(flag arguments, preset value) of one wrong value for the row, or None where a flag
    cannot be wrong (an on/off switch) or any text is right."""
    if row.minimum is not None:
        number = row.minimum - 1
    elif row.maximum is not None:
        number = row.maximum + 1
    elif row.words and row.words == row.values and not row.const:
        return [row.flag, "nonsense"], "nonsense"
    else:
        return {"memory_limit": ([row.flag, "lots"], "lots"),
                "inputs.values": ([row.flag, "x=abc"], {"x": "abc"})}.get(row.name)
    if row.split:
        return [row.flag, f"x={number}"], {"x": [number]}
    if row.factory:
        return [row.flag, f"x={number}"], {"x": number}
    return [row.flag, str(number)], number


#: rows whose flag takes no wrong value (switches, free text checked as a whole) or only words argparse
#: knows (a log level's name for its number)
ANY_VALUE = {"providers", "enable_mem_pattern", "enable_cpu_mem_arena", "use_deterministic_compute", "io_binding",
             "intra_op_thread_affinities", "config_entries", "inputs.mode", "inputs.files", "inputs.data",
             "log_severity_level", "intra_op_allow_spinning", "inter_op_allow_spinning",
             "ep_libraries"}   # a library path is checked where the session is made, on the machine that loads it


def test_every_row_with_a_wrong_value_is_checked_below():
    assert {row.name for row in SESSION_FIELDS if row.flag and _wrong(row) is None} == ANY_VALUE


@pytest.mark.parametrize("row", [row for row in SESSION_FIELDS if row.flag and _wrong(row)], ids=lambda row: row.name)
def test_a_wrong_value_gets_one_message_from_a_flag_and_from_a_preset(tmp_path, row):
    argv, value = _wrong(row)
    data = {"inputs": {row.name[len("inputs."):]: value}} if row.name.startswith("inputs.") else {row.name: value}
    preset = tmp_path / "preset.json"
    preset.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError) as from_flag:
        _from_flags(argv)
    with pytest.raises(UserError) as from_preset:
        _from_flags(["--config", str(preset)])
    flagged = from_flag.value.message
    assert row.flag in flagged and "\n" not in flagged
    # an entry is `inputs.dims.x` in a preset, and the flag beside its text (`--dim x=-1`) on the command line
    assert re.sub(re.escape(row.name) + r"(\.x)?(\[0\])?", row.flag, from_preset.value.message) == flagged


def test_a_flag_on_top_of_a_preset_wins_and_the_rest_of_the_preset_stays(tmp_path):
    preset = tmp_path / "preset.json"
    SessionConfig(intra_op_num_threads=2, dynamic_block_base=4, log_severity_level=0).save(preset)
    config = _from_flags(["--config", str(preset), "--threads", "3", "--intra-spinning", "off", "--no-mem-pattern",
                          "--log-severity", "fatal", "--sample", "2", "--zeros"])
    assert (config.intra_op_num_threads, config.dynamic_block_base, config.intra_op_allow_spinning) == (3, 4, False)
    assert (config.enable_mem_pattern, config.log_severity_level, config.inputs.sample) == (False, 4, 2)
    assert config.inputs.mode == "zeros"


def test_the_optimisation_levels_are_named_in_one_table():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    naming = sorted(path.relative_to(root).as_posix() for path in (root / "app").rglob("*.py")
                    if '"extended"' in path.read_text(encoding="utf-8"))
    assert naming == ["app/core/session/fields.py"]


def test_what_onnx_runtime_calls_each_setting_is_a_name_it_knows():
    import onnxruntime as ort

    from app.core.session.config import supported_config_keys

    options, known = ort.SessionOptions(), supported_config_keys()
    for row in SESSION_FIELDS:
        assert not row.option or hasattr(options, row.option), row.name
        assert not row.entry or row.entry in known, row.name
        if row.enum and hasattr(ort, row.enum):         # device policies: ONNX Runtime 1.22 and newer
            assert [value for value, _ in row.members] == [v for v in row.values if v in dict(row.members)], row.name
            assert all(hasattr(getattr(ort, row.enum), member) for _, member in row.members), row.name
