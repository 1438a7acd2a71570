"""The user's settings: one object, one versioned JSON file under the platform config folder.

A file this version cannot read (damaged, or written by a newer ORTune) is never overwritten:
the window's load moves it aside under a new name and says so, then starts from the defaults.
Something that is not a regular file there (a FIFO, a device, a folder) is never opened, since
opening a FIFO blocks until a writer comes: every load moves it aside and says so."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable

from app.core.jobs.disk import named_when_full
from app.core.jobs.errors import UserError
from app.core.jobs.memory import DEFAULT_LIMIT, parse_memory_limit
from app.core.store.paths import config_dir

#: 2: the open models, the current one, the session, each tab's settings and the convert folder
SCHEMA_VERSION = 2
MAX_RECENT = 10
#: finished jobs the Jobs dock keeps (with their results); older ones are released
FINISHED_JOBS_KEPT = 50
#: a settings file is a few kilobytes; one past this is not ours
MAX_SETTINGS_BYTES = 16 << 20


@dataclass
class Settings:
    schema_version: int = SCHEMA_VERSION
    recent_files: list[str] = field(default_factory=list)
    window_geometry: str = ""      # base64 of QMainWindow.saveGeometry()
    window_state: str = ""         # base64 of QMainWindow.saveState()
    last_open_dir: str = ""
    finished_jobs_kept: int = FINISHED_JOBS_KEPT
    memory_limit: str = DEFAULT_LIMIT    # each job's memory budget: "75%" of what is available, or "4G"
    open_models: list[dict] = field(default_factory=list)   # [{path, kind, parent}] in the list's order
    current_model: str = ""        # the path of the model that was selected
    session: dict = field(default_factory=dict)             # the Session tab's setup (a preset)
    panels: dict[str, dict] = field(default_factory=dict)   # tab title -> that tab's own settings
    convert_output_dir: str = ""   # where the Convert tab saved last ("": the per-user default)

    #: not saved: where load_settings moved a file it could not read (None: nothing moved)
    set_aside = None
    #: not saved: the sentence that tells the user where and why (set with set_aside)
    set_aside_note = ""

    def add_recent(self, path: str | os.PathLike) -> None:
        text = str(Path(path).resolve())
        self.recent_files = [text] + [p for p in self.recent_files if p != text]
        del self.recent_files[MAX_RECENT:]


def settings_path() -> Path:
    return config_dir() / "settings.json"


class _NotAFile(Exception):
    """The settings path holds something that is not a regular file."""


def _read_regular(path: Path) -> bytes:
    """The bytes of a regular file, opened without blocking and checked once open, so a FIFO
    that took the file's place meanwhile is not read either."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise _NotAFile()
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise _NotAFile()
        with os.fdopen(handle, "rb", closefd=False) as stream:
            return stream.read(MAX_SETTINGS_BYTES + 1)
    finally:
        os.close(handle)


def _unreadable(path: Path) -> tuple[dict | None, str]:
    """The file's values, or None and why this version cannot use them."""
    data = _read_regular(path)
    if len(data) > MAX_SETTINGS_BYTES:
        return None, "damaged"
    try:
        raw = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None, "damaged"
    if not isinstance(raw, dict):
        return None, "damaged"
    version = raw.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return None, "damaged"
    if version > SCHEMA_VERSION:
        return None, f"v{version}"
    return raw, ""


def _set_aside(path: Path, why: str) -> Path:
    target = path.with_name(f"{path.stem}.{why}-{time.strftime('%Y%m%d-%H%M%S')}{path.suffix}")
    n = 1
    while target.exists():
        target = target.with_name(f"{path.stem}.{why}-{time.strftime('%Y%m%d-%H%M%S')}-{n}{path.suffix}")
        n += 1
    os.replace(path, target)
    return target


def load_settings(path: Path | None = None, set_aside: bool = False) -> Settings:
    """Read the settings; a missing file gives the defaults, and so does one this version cannot
    read (damaged, or newer). With `set_aside` (the window's load) such a file is renamed first,
    so saving later does not overwrite it; Settings.set_aside says where it went and
    set_aside_note says so in a sentence. What is not a regular file is moved aside by every load."""
    path = path or settings_path()
    try:
        raw, why = _unreadable(path)
    except OSError:
        return Settings()
    except _NotAFile:
        return _moved_aside(path, "not-a-file", lambda aside: f"The settings file {path} was not a regular file "
                            f"(a FIFO, a device or a folder); it was moved to {aside} and the defaults are used.")
    if raw is None:
        if set_aside:
            return _moved_aside(path, why, lambda aside: "The settings file could not be read by this version "
                                f"(damaged, or written by a newer ORTune); it was kept as {aside} and the defaults are used.")
        return Settings()
    known = {f.name for f in fields(Settings)}
    values = {k: v for k, v in raw.items() if k in known}
    values["schema_version"] = SCHEMA_VERSION     # 1 -> 2 only added fields: their defaults fill in
    try:
        settings = Settings(**values)
    except TypeError:
        return Settings()
    _repair(settings)
    return settings


def _moved_aside(path: Path, why: str, note: Callable[[Path], str]) -> Settings:
    settings = Settings()
    try:
        settings.set_aside = _set_aside(path, why)
    except OSError:
        return settings
    settings.set_aside_note = note(settings.set_aside)
    return settings


def _repair(settings: Settings) -> None:
    """Values of the wrong type or out of range fall back to their defaults, one by one."""
    defaults = Settings()
    for name, kind in (("recent_files", list), ("open_models", list), ("session", dict), ("panels", dict),
                       ("current_model", str), ("convert_output_dir", str), ("last_open_dir", str),
                       ("window_geometry", str), ("window_state", str)):
        if not isinstance(getattr(settings, name), kind):
            setattr(settings, name, getattr(defaults, name))
    settings.recent_files = [p for p in settings.recent_files if isinstance(p, str)][:MAX_RECENT]
    settings.open_models = [m for m in settings.open_models if isinstance(m, dict) and isinstance(m.get("path"), str)]
    settings.panels = {k: v for k, v in settings.panels.items() if isinstance(v, dict)}
    kept = settings.finished_jobs_kept
    if not isinstance(kept, int) or isinstance(kept, bool) or kept < 1:
        settings.finished_jobs_kept = FINISHED_JOBS_KEPT
    try:
        parse_memory_limit(settings.memory_limit, "memory_limit")
    except UserError:
        settings.memory_limit = DEFAULT_LIMIT


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Write through a new temporary file of our own (created exclusively, so a link or file
    planted under a predictable name is never written through), renamed into place.
    A full disk is a UserError naming it; the settings there stay as they were."""
    path = path or settings_path()
    text = json.dumps(asdict(settings), indent=2)
    with named_when_full(path.parent, len(text.encode("utf-8"))):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
