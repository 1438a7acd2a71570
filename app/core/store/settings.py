"""The user's settings: one object, one versioned JSON file under the platform config folder.

A file this version cannot read (damaged, or written by a newer ORTune) is never overwritten:
the window's load moves it aside under a new name and says so, then starts from the defaults."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.jobs.memory import DEFAULT_LIMIT, parse_memory_limit
from app.core.store.paths import config_dir

#: 2: the open models, the current one, the session, each tab's settings and the convert folder
SCHEMA_VERSION = 2
MAX_RECENT = 10
#: finished jobs the Jobs dock keeps (with their results); older ones are released
FINISHED_JOBS_KEPT = 50


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

    def add_recent(self, path: str | os.PathLike) -> None:
        text = str(Path(path).resolve())
        self.recent_files = [text] + [p for p in self.recent_files if p != text]
        del self.recent_files[MAX_RECENT:]


def settings_path() -> Path:
    return config_dir() / "settings.json"


def _unreadable(path: Path) -> tuple[dict | None, str]:
    """The file's values, or None and why this version cannot use them."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
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
    so saving later does not overwrite it; Settings.set_aside says where it went."""
    path = path or settings_path()
    try:
        raw, why = _unreadable(path)
    except OSError:
        return Settings()
    if raw is None:
        settings = Settings()
        if set_aside:
            try:
                settings.set_aside = _set_aside(path, why)
            except OSError:
                pass
        return settings
    known = {f.name for f in fields(Settings)}
    values = {k: v for k, v in raw.items() if k in known}
    values["schema_version"] = SCHEMA_VERSION     # 1 -> 2 only added fields: their defaults fill in
    try:
        settings = Settings(**values)
    except TypeError:
        return Settings()
    _repair(settings)
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
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(settings), indent=2), encoding="utf-8")
    os.replace(tmp, path)
