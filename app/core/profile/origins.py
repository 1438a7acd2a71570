"""Which model each trace ORTune recorded came from.

ORT's trace does not name the model it profiled, so the profile job notes it here (a
small JSON file in ORTune's data folder, keyed by the trace's path, with its size and
modification time so a trace replaced since is not taken for the one noted). A diff of
two such traces can then time the two models themselves (profile-diff --measure)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from app.core.store.paths import data_dir

MAX_ENTRIES = 1000        # the oldest notes go first


def origins_path() -> Path:
    return data_dir() / "traces" / "origins.json"


def _key(trace: Path) -> tuple[str, list[int]]:
    info = trace.stat()
    return str(trace.resolve()), [info.st_size, info.st_mtime_ns]


def _load(path: Path) -> dict:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return entries if isinstance(entries, dict) else {}


def remember(trace: str | os.PathLike, model: str | os.PathLike) -> None:
    """Note that `trace` was recorded from `model` (best effort: a note that cannot be
    written only costs the later diff its measurement)."""
    path = origins_path()
    name, stamp = _key(Path(trace))
    entries = _load(path)
    entries.pop(name, None)
    entries[name] = {"model": str(Path(model).resolve()), "stamp": stamp}
    entries = dict(list(entries.items())[-MAX_ENTRIES:])
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(entries), encoding="utf-8")
        partial.replace(path)
    except OSError:                       # a full disk too: the notes there stay as they were
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def model_of(trace: str | os.PathLike) -> str | None:
    """The model `trace` was recorded from, when ORTune noted it and the trace is unchanged."""
    trace = Path(trace)
    if not trace.is_file():
        return None
    name, stamp = _key(trace)
    entry = _load(origins_path()).get(name)
    return entry["model"] if isinstance(entry, dict) and entry.get("stamp") == stamp else None
