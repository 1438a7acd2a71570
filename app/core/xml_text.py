"""Text that came from a file or a peer, in an XML file (a JUnit report): XML 1.0 has no way
to write some characters at all (most C0 controls, U+FFFE, U+FFFF, lone surrogates, which a
file name that is not UTF-8 decodes to), and a file holding one does not parse. Each is
replaced by its escape (`\\ufffe`, as app.core.text writes a control character) and counted,
so the report says how many of its characters are not as stored."""

from __future__ import annotations

import re

from app.core.text import printable

#: every character outside XML 1.0's Char production
_FORBIDDEN = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class XmlText:
    """Makes text fit for an XML file, counting the characters it had to replace."""

    def __init__(self):
        self.replaced = 0

    def _escape(self, match: re.Match) -> str:
        self.replaced += 1
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    def __call__(self, text, limit: int | None = None) -> str:
        """`text` with what XML forbids replaced (and counted), then made printable
        (app.core.text: the controls XML allows, a tab or a newline, are escaped too)."""
        return printable(_FORBIDDEN.sub(self._escape, text if isinstance(text, str) else str(text)), limit)
