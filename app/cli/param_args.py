"""Command-line flags made from a job's parameters dataclass: each field whose metadata names a
flag (app.core.jobs.params.setting) gets it, with the field's help, metavar and default, as
the session's flags are made from its table (app.cli.session_args).

A flag not given reads as None and is left out, so the dataclass's own default applies; the
values given are text, read and checked by the parameters themselves (from_dict(text=True)),
so a wrong flag gets the message a wrong preset value gets, naming the flag."""

from __future__ import annotations

import argparse
import dataclasses


def _flagged(params: type):
    """The fields with a flag and a plain value (a list or an object has a factory instead: its
    flag is the command's own, which parses the text, as --prompt-lengths 1,8,64)."""
    return [field for field in dataclasses.fields(params)
            if field.metadata.get("flag") and field.default_factory is dataclasses.MISSING]


def _dest(field: dataclasses.Field) -> str:
    """The flag's attribute on the parsed arguments: argparse's own, from the flag (a field's
    name may be another flag's: convert's --rtol option beside --tol-rel)."""
    return field.metadata["flag"].lstrip("-").replace("-", "_")


def add_param_arguments(group, params: type, defaults: dict | None = None) -> None:
    """A flag for each field of `params` that names one; `defaults` (by field name): a command's
    own default where it is not the dataclass's (said in the help, given by params_from_args)."""
    for field in _flagged(params):
        meta = field.metadata
        default = (defaults or {}).get(field.name, field.default)
        default = None if default is dataclasses.MISSING else default
        text = meta["help"].replace("%", "%%")
        if isinstance(default, bool):
            if default:
                group.add_argument(meta["flag"], dest=_dest(field), action=argparse.BooleanOptionalAction,
                                   default=None, help=text)
            else:
                group.add_argument(meta["flag"], dest=_dest(field), action="store_true", default=None, help=text)
            continue
        if default is not None and meta.get("percent"):
            text += f" (default {default * 100:g})"
        elif default is not None:
            text += f" (default {default:g})" if isinstance(default, float) else f" (default {default})"
        group.add_argument(meta["flag"], dest=_dest(field), metavar=meta["metavar"] or None,
                           choices=meta["choices"] or None, help=text)


def flag_values(args, params: type) -> dict:
    """Field name -> the text given to its flag, for every flag of add_param_arguments that was
    given; a percent field's as the fraction it holds (checked here, in the flag's own unit)."""
    from app.core.jobs.errors import UserError

    values = {}
    for field in _flagged(params):
        value = getattr(args, _dest(field), None)
        if value is None:
            continue
        if field.metadata.get("percent"):
            flag, least = field.metadata["flag"], field.metadata.get("minimum")
            try:
                number = float(value)
            except ValueError:
                raise UserError("bad-option", f"{flag} expects a percentage such as 5, not {value!r}") from None
            if least is not None and not number >= least * 100:
                raise UserError("bad-option", f"{flag} must be {least * 100:g} or more, not {value}")
            value = number / 100.0
        values[field.name] = value
    return values


def params_from_args(args, params: type, given: dict | None = None, defaults: dict | None = None):
    """`params` read from the fields `given` and, on top, every flag of add_param_arguments that
    was given; `defaults` as add_param_arguments had them."""
    return params.from_dict({**(defaults or {}), **(given or {}), **flag_values(args, params)}, text=True)
