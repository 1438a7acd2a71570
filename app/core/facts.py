"""One fact measured more than once in a sitting: a model's median latency on one input plan
with one set of session settings, timed on several tabs (a benchmark alone, beside other
models in a comparison, as a tune's or a search's starting point). Each way of timing gives
its own figure, and shown one at a time they read as unexplained numbers for one thing.

The book keeps every figure of a fact (keyed by the model's content, the inputs' names,
types and shapes, and the settings), so a view shows the figure it measured with the others
beside it, each with where and how it was timed.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.core.formatting import duration_text


@dataclass(frozen=True)
class Figure:
    """One timing of a fact: `where` (the tab or command), `how` (alone, in alternation …),
    its p50 in ms and when it was measured (seconds since the epoch)."""
    where: str
    how: str
    p50_ms: float
    when: float


def _settings_key(session: dict | None) -> str:
    from app.core.session.config import SessionConfig

    try:
        canonical = SessionConfig.from_dict(dict(session or {})).to_dict()
    except Exception:      # a stored result's settings this version reads differently: as given
        canonical = dict(session or {})
    canonical.pop("inputs", None)            # the plan is keyed by what it gave, below
    return json.dumps(canonical, sort_keys=True, default=str)


def _plan_key(inputs) -> tuple:
    return tuple((row.get("name"), row.get("dtype"), tuple(row.get("shape") or ())) for row in inputs or [])


@dataclass
class FactBook:
    """Every figure of every fact seen in this sitting."""
    figures: dict[tuple, list[Figure]] = field(default_factory=dict)

    def identity(self, path: str | Path) -> str | None:
        """The model's content hash, from the history's cache (per path, size and time of
        change: the job that measured the model recorded it there, so this reads no file);
        None where the file is gone."""
        from app.core.store.history import History

        try:
            return History(warn=lambda _message: None).model_identity(path)["sha256"]
        except OSError:
            return None

    def key(self, path: str | Path, inputs, session: dict | None) -> tuple | None:
        identity = self.identity(path)
        return None if identity is None else (identity, _plan_key(inputs), _settings_key(session))

    def add(self, path: str | Path, inputs, session: dict | None, figure: Figure) -> list[Figure]:
        """Keep `figure` (once: a result shown again adds nothing) and return the fact's other
        figures, oldest first."""
        key = self.key(path, inputs, session)
        if key is None or not (figure.p50_ms and figure.p50_ms > 0):
            return []
        kept = self.figures.setdefault(key, [])
        if figure not in kept:
            kept.append(figure)
        return sorted((other for other in kept if other != figure), key=lambda other: other.when)


def figures_text(others: list[Figure]) -> str:
    """The other figures of the fact a view shows, in one sentence; "" where there are none."""
    if not others:
        return ""
    listed = "; ".join(f"{other.where} {duration_text(other.p50_ms)} ({other.how}, "
                       f"{time.strftime('%H:%M:%S', time.localtime(other.when))})" for other in others)
    return (f"Also measured in this sitting, same model, inputs and settings: p50 {listed}. Each way of timing "
            f"gives its own figure.")
