"""Text that came from a file or a peer, in Markdown that GitHub renders (a pull request
comment, a job's step summary): a name is shown as text, never read as Markdown, so no
HTML, link, image, heading or emphasis can come from it.

A name goes into a code span: inside one, CommonMark reads no HTML, entity, link or
autolink (GitHub links a bare `a@b.co` or `www.x.co` even when each character is
backslash-escaped). The span is fenced with one backtick more than the longest run in the
name, so no backtick in it can close the span early; in a table cell a `|` is escaped, as
the GFM table reads it even inside a code span. Control characters are escaped first
(app.core.text.printable), so a name is one line."""

from __future__ import annotations

import re

from app.core.text import VALUE_LIMIT, printable

_BACKTICKS = re.compile("`+")


def code(text, limit: int | None = VALUE_LIMIT) -> str:
    """`text` as an inline code span that shows exactly its printable form."""
    shown = printable(text, limit)
    if not shown:
        return "(empty)"
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(shown)), default=0) + 1)
    # CommonMark takes one space off each end of a span that begins and ends with one (unless
    # it is all spaces); a span that begins or ends with a backtick needs the space to be told
    # from its fence
    padded = f" {shown} " if shown.strip(" ") and (shown[0] in " `" or shown[-1] in " `") else shown
    return f"{fence}{padded}{fence}"


def cell(text, limit: int | None = 300) -> str:
    """`text` as a table cell's code span: its pipes escaped, so it stays in its cell."""
    return code(text, limit).replace("|", "\\|")
