"""What the window keeps from one run to the next, beyond its geometry: the open models (variants
under their sources), the selected one, the session setup and each tab's own settings. It is
written into the Settings object on quit and read back once the window is on screen."""

from __future__ import annotations

from pathlib import Path

from app.core.jobs.errors import UserError
from app.core.session.config import SessionConfig


def remember(window) -> None:
    """Copy the window's state into window.settings (saved by the caller)."""
    settings = window.settings
    if window._model_list is not None:
        models = window.model_list.models()
        settings.open_models = [{"path": m.path, "kind": m.kind, "parent": m.parent.path if m.parent else ""}
                                for m in models]
        current = window.model_list.current()
        settings.current_model = current.path if current is not None else ""
    settings.session = window.session.preset().to_dict()
    for panel in window.panels:          # tabs never shown keep what they had saved
        if panel.built:
            settings.panels[panel.title] = panel.saved_settings()


def restore(window) -> None:
    """Reopen the models of the last run that are still there and select the one that was
    selected; set the session as it was. What is gone or unreadable is logged and skipped."""
    settings = window.settings
    if settings.session:
        try:
            window.session.update(SessionConfig.from_dict(settings.session))
        except (UserError, ValueError, TypeError) as exc:
            window.log("Settings", "warning", f"the saved session setup was not used: {getattr(exc, 'message', exc)}")
    opened = {}
    chosen = None
    for entry in settings.open_models:
        path, parent_path = entry["path"], entry.get("parent") or ""
        if not Path(path).is_file():
            window.log("Settings", "info", f"{path} is gone; not reopened")
            continue
        if parent_path and parent_path not in opened:
            continue                     # its source did not come back: neither does it
        kind = entry.get("kind") if isinstance(entry.get("kind"), str) else "source"
        model = window.open_model(path, parent=opened.get(parent_path), kind=kind, select=False)
        opened[model.path] = model
        if model.path == settings.current_model:
            chosen = model
    if chosen is None and opened:
        chosen = next(iter(opened.values()))
    if chosen is not None:
        window.model_list.select(chosen)
