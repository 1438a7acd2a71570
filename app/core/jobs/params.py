"""Typed job parameters: a dataclass per job, checked once, and turned into and out of
the JSON that presets, the command line and the window use.

Each field's type comes from its annotation. A field may say, in its metadata, the
smallest and largest values it takes (`minimum`, `maximum`; for a list or object of numbers, each number's),
why a larger value is refused (`why`), the values it allows (`choices`), a check of its own (`check(value,
label)`) and the flag that sets it on the command line (`flag`, with its `help` and `metavar`; the window's
forms take `label` and `help`), so one check serves every caller and its message names what the user typed: the
flag for command-line text, the setting's place otherwise. Text (from
the command line) is read as the field's type when `from_dict(..., text=True)` is asked for it.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, Union

from app.core.jobs.errors import UserError

#: the largest whole number any field takes: past it a value is a typo (or an attack), not a setting
LARGEST = 2 ** 53


def setting(default: Any = dataclasses.MISSING, *, minimum: float | None = None, maximum: float | None = None,
            choices: tuple = (), flag: str = "", factory: Any = dataclasses.MISSING, why: str = "",
            check: Any = None, about: Any = None, help: str = "", metavar: str = "", label: str = "",
            percent: bool = False) -> Any:
    """A dataclass field with the limits the check applies and how a flag or a form presents it
    (see the module docstring); `about` is whatever else describes the field (the session's table row);
    `percent`: the field holds a fraction that its flag takes in percent (5 for 0.05)."""
    metadata = {"minimum": minimum, "maximum": maximum, "choices": tuple(choices), "flag": flag, "why": why,
                "check": check, "about": about, "help": help, "metavar": metavar, "label": label, "percent": percent}
    if factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _label(field: dataclasses.Field, prefix: str, text: bool) -> str:
    """How a message names the field: its flag for the command line, else its place."""
    return (text and field.metadata.get("flag")) or f"{prefix}{field.name}"


def _item(label: str, key: Any) -> str:
    """How a message names one entry of a list or object: `inputs.dims.batch`, `shape[0]`; on
    the command line the flag alone (`--dim`), as the user typed the entry beside it."""
    if label.startswith("--"):
        return label
    return f"{label}[{key}]" if isinstance(key, int) else f"{label}.{key}"


def _bad(label: str, wanted: str, value: Any) -> UserError:
    shown = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    return UserError("bad-option", f"{label} expects {wanted}, not {shown[:80]}")


def _read(kind: Any, value: Any, label: str, text: bool) -> Any:
    """`value` as `kind` (an annotation), or a UserError naming `label`."""
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        options = [k for k in typing.get_args(kind) if k is not type(None)]
        if value is None:
            return None
        return _read(options[0], value, label, text) if len(options) == 1 else value
    if kind is Any:
        return value
    if isinstance(kind, type) and hasattr(kind, "from_dict"):
        if value is None:
            return kind()
        if isinstance(value, kind):
            return value
        if not isinstance(value, dict):
            raise _bad(label, "an object", value)
        if issubclass(kind, Params):
            return kind.from_dict(value, text=text, prefix=f"{label}.")
        return kind.from_dict(value)
    if kind is bool:
        if text and isinstance(value, str) and value.lower() in ("1", "true", "yes", "0", "false", "no"):
            return value.lower() in ("1", "true", "yes")
        if not isinstance(value, bool):
            raise _bad(label, "true or false", value)
        return value
    if kind is int:
        if text and isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                raise _bad(label, "a whole number", value) from None
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad(label, "a whole number", value)
        if abs(value) > LARGEST:
            raise UserError("bad-option", f"{label} is far too large: {value}")
        return value
    if kind is float:
        if text and isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise _bad(label, "a number", value) from None
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise _bad(label, "a number", value)
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise _bad(label, "text", value)
        return value
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise _bad(label, "a list", value)
        (item,) = typing.get_args(kind) or (Any,)
        return [_read(item, v, _item(label, i), text) for i, v in enumerate(value)]
    if origin is dict or kind is dict:
        if not isinstance(value, dict):
            raise _bad(label, "an object", value)
        key_kind, item = typing.get_args(kind) or (str, Any)
        if any(not isinstance(k, str) for k in value):
            raise _bad(label, "an object with text keys", value)
        return {k: _read(item, v, _item(label, k), text) for k, v in value.items()}
    raise TypeError(f"{label}: the field type {kind!r} is not one a job parameter can have")


def _numbers(value: Any, label: str):
    """(label, number) for `value` itself or each number inside a list or object of them."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, _item(label, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _numbers(item, _item(label, index))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield label, value


def _check_limits(field: dataclasses.Field, value: Any, label: str) -> None:
    minimum, maximum, choices, check = (field.metadata.get(key) for key in ("minimum", "maximum", "choices", "check"))
    for place, number in _numbers(value, label):
        if minimum is not None and number < minimum:
            raise UserError("bad-option", f"{place} must be at least {minimum:g}, not {number:g}")
        if maximum is not None and number > maximum:
            why = field.metadata.get("why")
            shown = (f"{int(maximum):,}, not {number:,}" if isinstance(number, int) and float(maximum).is_integer()
                     else f"{maximum:g}, not {number:g}")
            raise UserError("bad-option", f"{place} must be at most {shown}" + (f": {why}" if why else ""))
    if choices and value is not None and value not in choices:
        raise UserError("bad-option", f"{label} must be one of {', '.join(map(str, choices))}, not {value!r}")
    if check is not None and value is not None:
        check(value, label)


class Params:
    """Base of every job's parameters (a dataclass): one check, JSON in and out."""

    @classmethod
    def from_dict(cls, data: Any = None, *, text: bool = False, prefix: str = ""):
        if data is None:
            data = {}
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise _bad(prefix.rstrip(".") or "the job's parameters", "an object", data)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(map(str, data)) - set(fields))
        if unknown:
            raise UserError("bad-option", f"unknown setting(s): {', '.join(prefix + u for u in unknown)}")
        hints = typing.get_type_hints(cls)
        values = {}
        for name, field in fields.items():
            if name not in data:
                if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                    raise UserError("bad-option", f"{_label(field, prefix, text)} is required")
                continue
            label = _label(field, prefix, text)
            values[name] = _read(hints[name], data[name], label, text)
            _check_limits(field, values[name], label)
        made = cls(**values)
        made.validate()
        return made

    def validate(self) -> None:
        """Checks across fields; a field's own type and limits are checked in from_dict."""

    def checked(self):
        """A copy read back through from_dict: every field checked, as if it came as JSON."""
        return type(self).from_dict(self.to_dict())

    def to_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _plain(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
