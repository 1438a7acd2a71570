"""The session flags shared by bench, compare, profile, iobinding, tune and diagnose, made
from the table of session settings (app.core.session.fields).

`--config FILE` loads a preset first; every flag given on top of it wins."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli.param_args import add_param_arguments, params_from_args
from app.core.jobs.errors import UserError
from app.core.jobs.params import LARGEST
from app.core.session.fields import FIELD, SESSION_FIELDS, SessionField


def _key_value(text: str, flag: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UserError("bad-option", f"{flag} expects KEY=VALUE, not {text!r}")
    return key.strip(), value.strip()


def whole_number(text: str, flag: str, minimum: int = 0, maximum: int = LARGEST, why: str = "") -> int:
    """A flag's whole-number value, or a UserError naming the flag (and `why` a value
    past `maximum` is refused)."""
    try:
        value = int(text)
    except ValueError:
        raise UserError("bad-option", f"{flag} expects a whole number, not {text!r}") from None
    if value < minimum:
        raise UserError("bad-option", f"{flag} must be at least {minimum}, not {value}")
    if value > maximum:
        raise UserError("bad-option", f"{flag} must be at most {maximum:,}, not {value:,}" + (f": {why}" if why else ""))
    return value


OPT_LEVEL_NAMES = list(FIELD["graph_optimization_level"].words)      # the session's one table


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of every session setting, made from its row in app.core.session.fields."""
    groups = {"session": parser.add_argument_group("session"), "inputs": parser.add_argument_group("inputs")}
    parser.add_argument("--target", metavar="NAME",
                        help="run on this remote target (see `ortune targets`); default: this machine")
    groups["session"].add_argument("--config", metavar="FILE.json", help="a saved session preset to start from")
    groups["session"].add_argument("--provider-option", action="append", default=[], metavar="KEY=VALUE",
                                   help="an option of the last --provider (e.g. device_id=0)")
    for row in SESSION_FIELDS:
        if row.flag:
            _add_flag(groups["inputs" if row.group == "inputs" else "session"], row)


def _add_flag(group, row: SessionField) -> None:
    help_text = row.help.replace("%", "%%")
    if row.const:
        group.add_argument(row.flag, dest=row.dest, action="store_const", const=row.const, help=help_text)
    elif isinstance(row.default, bool):
        group.add_argument(row.flag, dest=row.dest, action=argparse.BooleanOptionalAction, help=help_text)
    elif row.factory is not None:
        group.add_argument(row.flag, dest=row.dest, action="append", default=[], metavar=row.metavar,
                           help=help_text)
    elif row.words and row.words != row.values:      # words for values (log levels): argparse knows the words
        group.add_argument(row.flag, dest=row.dest, choices=row.words, help=help_text)
    else:                                             # the value itself: SessionConfig checks it, as in a preset
        group.add_argument(row.flag, dest=row.dest, help=help_text,
                           metavar="{" + ",".join(row.words) + "}" if row.words else row.metavar or None)


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The run settings' flags, made from RunSettings."""
    from app.core.measure.runs import RunSettings

    add_param_arguments(parser.add_argument_group("measurement"), RunSettings)


def run_settings_from_args(args):
    """The measurement flags as RunSettings, checked once, by RunSettings itself."""
    from app.core.measure.runs import RunSettings

    return params_from_args(args, RunSettings)


def session_config_from_args(args):
    """The preset of --config (or the defaults) with every flag given on top, read and checked
    by SessionConfig itself: a wrong flag gets the message a wrong preset value gets, naming the flag."""
    from app.core.session.config import SessionConfig

    data = (SessionConfig.load(args.config) if args.config else SessionConfig()).to_dict()
    given = {row: getattr(args, row.dest, None) for row in SESSION_FIELDS if row.flag}
    given = {row: value for row, value in given.items() if value is not None and value != []}
    for row in given:                   # first what a flag implies, so a flag of its own wins (--input, --zeros)
        for name, also in row.sets:
            _put(data, name, also)
    for row, value in given.items():
        _put(data, row.name, _read(data, row, value))
    for text in args.provider_option:
        key, value = _key_value(text, "--provider-option")
        data["providers"][-1].setdefault("options", {})[key] = value
    config = SessionConfig.from_dict(data, text=True)
    _check_input_files(config.inputs.files)
    return config


def _read(data: dict, row: SessionField, given):
    """A flag's text as the preset's value at the row's place (still text, for SessionConfig to read)."""
    if row.widget == "providers":
        return [{"name": name} for name in given]
    if row.factory is not None:
        value = dict(_get(data, row.name) or {})
        for text in given:
            key, item = (row.bare_key, text) if row.bare_key and "=" not in text else _key_value(text, row.flag)
            value[key] = [part for part in item.split(row.split) if part.strip()] if row.split else item
        return value
    if row.words != row.values and not row.const:
        return dict(row.choices)[given]
    return str(Path(given).expanduser().absolute()) if row.path else given


def _get(data: dict, name: str):
    """The value at a row's place: "inputs.seed" is data["inputs"]["seed"]."""
    *folders, key = name.split(".")
    for folder in folders:
        data = data.get(folder) or {}
    return data.get(key)


def _put(data: dict, name: str, value) -> None:
    *folders, key = name.split(".")
    for folder in folders:
        data = data.setdefault(folder, {})
    data[key] = value


def _check_input_files(files: dict[str, str]) -> None:
    """Input files are read in the job's process; a missing one is found before it starts."""
    from pathlib import Path

    for file in files.values():
        path = Path(file)
        if not path.is_file():
            what = "not found" if not path.exists() else "not a regular file"
            raise UserError("not-found", f"{path}: input file {what}")
