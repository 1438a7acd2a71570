"""A session preset in words ("2 threads, spinning off, dynamic block base 4"), whole or as
what it changes against another preset: the tuner's settings, the history's summaries and
the command line's text all read the same. How each setting reads is its row's (`reads`,
app.core.session.fields); the words follow the table's order."""

from __future__ import annotations

from app.core.session.config import SessionConfig
from app.core.session.fields import SESSION_FIELDS


def aspects(settings: dict) -> dict[tuple[str, int], tuple[str, bool, bool]]:
    """Each aspect of a preset (a SessionConfig dict) as (words, is ORT's default, named in a
    whole description even so), by (setting, index); an option without effect in this preset
    (spinning of a pool of one thread) is left out."""
    config = SessionConfig.from_dict(settings)
    return {(row.name, index): (words, default, row.named)
            for row in SESSION_FIELDS if row.reads
            for index, (words, default) in enumerate(row.reads(config))}


def settings_text(settings: dict, base: dict | None = None) -> str:
    """The preset in words: with no `base`, its provider, optimisation, threads and mode and
    whatever else is not ORT's default; with a `base`, only what differs from the base
    (two presets that run differently never read the same)."""
    own = aspects(settings)
    if base is None:
        return ", ".join(text for text, default, named in own.values() if named or not default)
    theirs = aspects(base)
    # an aspect the base lacks (spinning, when its pool has one thread) is named unless it is the default
    changed = [text for key, (text, default, _) in own.items()
               if (theirs[key][0] != text if key in theirs else not default)]
    return ", ".join(changed) or "the same settings"
