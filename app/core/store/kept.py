"""Models the history keeps beside its entries: optimize's copy of each candidate it made,
for a later search to reuse (app.core.optimize.reuse). They live in one folder of the data
folder, one sub-folder per candidate, each with a note of its source model and time.

They are bounded: the newest KEEP_PER_MODEL of each source model, and at most CAP_BYTES in
all (the oldest go first). An entry deleted from the history (the History tab's Delete,
`ortune history --delete`) takes its copy with it unless another entry names it; a copy no
entry names (its search never finished) goes once it is ORPHAN_AGE_S old. Nothing outside
that folder is ever removed, and no link is followed out of it."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from app.core.store.paths import data_dir

FOLDER = "optimize-candidates"      # under the data folder: one sub-folder per candidate
NOTE = "kept.json"                  # in each: {"model_sha256", "created"}
KEEP_PER_MODEL = 16                 # two whole searches' candidates of one model
CAP_BYTES = 4 << 30
ORPHAN_AGE_S = 24 * 3600.0          # a search holds its copies until its result is stored


def root() -> Path:
    return data_dir() / FOLDER


def folder_of(path: str | os.PathLike) -> Path | None:
    """The kept folder (a sub-folder of root(), itself no link) that holds `path`; None when
    `path` lies anywhere else."""
    try:
        base = Path(os.path.realpath(root()))
        real = Path(os.path.realpath(path))
    except (OSError, ValueError):
        return None
    if real == base or not real.is_relative_to(base):
        return None
    top = root() / real.relative_to(base).parts[0]
    return top if top.is_dir() and not top.is_symlink() else None


def note(folder: Path, model_sha256: str | None) -> None:
    (folder / NOTE).write_text(json.dumps({"model_sha256": model_sha256, "created": time.time()}), encoding="utf-8")


def remove(folder: Path) -> bool:
    """Remove a kept folder; anything that is not one is left alone."""
    if folder_of(folder) != folder:
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return not folder.exists()


def _entries() -> list[dict]:
    found = []
    try:
        folders = [f for f in root().iterdir() if f.is_dir() and not f.is_symlink()]
    except OSError:
        return []
    for folder in folders:
        try:
            told = json.loads((folder / NOTE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            told = {}
        try:
            size = sum(f.stat().st_size for f in folder.iterdir()
                       if f.is_file() and not f.is_symlink() and f.name != NOTE)
            created = float(told.get("created") or folder.stat().st_mtime)
        except (OSError, TypeError, ValueError):
            continue
        found.append({"folder": folder, "model": told.get("model_sha256"), "created": created, "bytes": size})
    return sorted(found, key=lambda e: e["created"], reverse=True)


def bound(named: set[str] | None = None, keep: Path | None = None, now: float | None = None) -> list[Path]:
    """Remove the copies beyond the bounds; `named`: the paths the history's entries name
    (None: unknown, so no copy counts as unnamed); `keep`: a copy just made, never removed.
    Returns the folders removed."""
    now = time.time() if now is None else now
    entries, gone, per_model = _entries(), [], {}
    named_folders = {folder_of(path) for path in named} if named is not None else None
    for entry in entries:              # newest first
        count = per_model[entry["model"]] = per_model.get(entry["model"], 0) + 1
        orphan = named_folders is not None and entry["folder"] not in named_folders \
            and now - entry["created"] > ORPHAN_AGE_S
        if entry["folder"] != keep and (count > KEEP_PER_MODEL or orphan):
            gone.append(entry)
    left = [e for e in entries if e not in gone]
    total = sum(e["bytes"] for e in left)
    for entry in reversed(left):       # oldest first
        if total <= CAP_BYTES:
            break
        if entry["folder"] != keep:
            gone.append(entry)
            total -= entry["bytes"]
    return [e["folder"] for e in gone if remove(e["folder"])]
