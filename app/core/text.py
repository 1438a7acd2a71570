"""Text that came from a file or a peer, made safe to show: on a terminal, in a log file,
in the window. Model files and remote workers are written by anyone; a name holding
ESC[2J or an OSC-8 link must not clear a screen or fake a hyperlink, a name holding a
newline must not forge a line of our own, and a 10 MB metadata value is not a line.

This is the terminal's rule; each other place such text goes has its own, in one module:
the lines a CI runner reads (app.core.ci_lines), Markdown (app.core.markdown_text) and XML
(app.core.xml_text)."""

from __future__ import annotations

import re
from typing import Any

#: how many characters of one value from a file are shown before it is cut
VALUE_LIMIT = 500

#: C0 controls, DEL and C1 controls (ESC and CSI among them), the Unicode line and paragraph
#: separators, the bidirectional overrides that make text read other than it is stored, and
#: lone surrogates (a file name that is not UTF-8 decodes to them; no stream can write one)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: Any, limit: int | None = VALUE_LIMIT, lines: bool = False) -> str:
    """`text` as it may be shown: every control character written as an escape (`\\x1b`)
    and, past `limit` characters (None: no limit), cut with "… (N more characters)".
    `lines`: the text is ours and may hold newlines and tabs (a report, a traceback); it
    keeps those. Values from a file are escaped whole, newlines included, before they are
    put into such a text, so that a name can never start a line."""
    text = text if isinstance(text, str) else str(text)
    cut = ""
    if limit is not None and len(text) > limit:
        cut = f"… ({len(text) - limit:,} more characters)"
        text = text[:limit]
    return (_UNSAFE_IN_LINES if lines else _UNSAFE).sub(_escape, text) + cut


def printable_values(value: Any, limit: int | None = VALUE_LIMIT) -> Any:
    """A copy of a result (dicts, lists, strings, numbers) with every string, keys included,
    made printable: what a text report is rendered from. The result itself, and its JSON,
    stay exact."""
    if isinstance(value, str):
        return printable(value, limit)
    if isinstance(value, dict):
        return {printable(k, limit) if isinstance(k, str) else k: printable_values(v, limit)
                for k, v in value.items()}
    if isinstance(value, list):
        return [printable_values(v, limit) for v in value]
    if isinstance(value, tuple):
        return tuple(printable_values(v, limit) for v in value)
    return value
