"""The user's settings: one object, one JSON file under the platform config folder."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.jobs.memory import DEFAULT_LIMIT, parse_memory_limit
from app.core.store.paths import config_dir

SCHEMA_VERSION = 1
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

    def add_recent(self, path: str | os.PathLike) -> None:
        text = str(Path(path).resolve())
        self.recent_files = [text] + [p for p in self.recent_files if p != text]
        del self.recent_files[MAX_RECENT:]


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings(path: Path | None = None) -> Settings:
    """Read the settings; a missing or damaged file gives the defaults."""
    path = path or settings_path()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Settings()
    if not isinstance(raw, dict):
        return Settings()
    known = {f.name for f in fields(Settings)}
    values = {k: v for k, v in raw.items() if k in known}
    values["schema_version"] = SCHEMA_VERSION
    try:
        settings = Settings(**values)
    except TypeError:
        return Settings()
    if not isinstance(settings.recent_files, list):
        settings.recent_files = []
    settings.recent_files = [p for p in settings.recent_files if isinstance(p, str)][:MAX_RECENT]
    kept = settings.finished_jobs_kept
    if not isinstance(kept, int) or isinstance(kept, bool) or kept < 1:
        settings.finished_jobs_kept = FINISHED_JOBS_KEPT
    try:
        parse_memory_limit(settings.memory_limit, "memory_limit")
    except UserError:
        settings.memory_limit = DEFAULT_LIMIT
    return settings


def save_settings(settings: Settings, path: Path | None = None) -> None:
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(settings), indent=2), encoding="utf-8")
    os.replace(tmp, path)
