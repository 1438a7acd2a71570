"""Text that came from a file or a peer, in the lines a CI runner reads (GitHub Actions and
runners like it): a runner takes any line of a step's output that begins with `::` (after
leading blanks) as a workflow command, and `##[` in its older form, so a model whose input
is named `::error title=…::all checks passed` or `::add-mask::…` would forge an annotation
or hide log text. No line of ORTune's output may begin so unless it is ORTune's own
annotation (made by `command` here); a name never starts a line.

And within ORTune's own workflow commands, a name's `%`, CR and LF are escaped as the runner
reads them, and in a property (`title=`) its `:` and `,` too."""

from __future__ import annotations

import re

from app.core.text import printable

#: what a runner reads as a command at the start of a line, after blanks
_COMMAND_START = re.compile(r"^([ \t\f\v]*)(::|##\[)", re.MULTILINE)


def runner_safe(text: str) -> str:
    """`text` (lines we print, made printable already) with every line that a runner would
    read as a command defused: its first `:` (or `#`) written as an escape, as printable()
    writes a control character, so the line reads as it is stored but commands nothing."""
    return _COMMAND_START.sub(lambda m: m.group(1) + f"\\x{ord(m.group(2)[0]):02x}" + m.group(2)[1:], text)


def _value(text: str, limit: int) -> str:
    return printable(text, limit).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def command(name: str, properties: dict[str, str], message: str, limit: int = 2000) -> str:
    """One of ORTune's own workflow commands, `::name key=value,…::message`, whatever the
    properties and the message hold."""
    given = ",".join(f"{key}={_value(value, 300).replace(':', '%3A').replace(',', '%2C')}"
                     for key, value in properties.items())
    return f"::{name}{' ' + given if given else ''}::{_value(message, limit)}"
