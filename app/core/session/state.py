"""The session setup a user is editing: one SessionConfig that tells its listeners when
it changes, so a form, the jobs and the one-click fixes all see the same setup.

Qt-free on purpose (like glue's state objects): the Session tab binds its widgets to it,
other tabs read it, and a test can drive it without a window. Fields are named by their
SessionConfig attribute, or "inputs.<name>" for the feed settings."""

from __future__ import annotations

import copy
from dataclasses import fields, replace
from typing import Any, Callable

from app.core.jobs.errors import UserError
from app.core.session.config import SessionConfig
from app.core.session.input_spec import FeedSpec

#: a listener gets the state and the set of field names that changed
Listener = Callable[["SessionState", frozenset], None]

INPUTS = "inputs."
FIELD_NAMES = frozenset([f.name for f in fields(SessionConfig) if f.name != "inputs"]
                        + [INPUTS + f.name for f in fields(FeedSpec)])


def _flat(config: SessionConfig) -> dict[str, Any]:
    data = {f.name: getattr(config, f.name) for f in fields(SessionConfig) if f.name != "inputs"}
    data.update({INPUTS + f.name: getattr(config.inputs, f.name) for f in fields(FeedSpec)})
    return data


#: the input settings that belong to one model (its sizes, values and files), not to the session
MODEL_INPUTS = ("dims", "shapes", "values", "files", "probed")


class SessionState:
    def __init__(self, preset: SessionConfig | None = None):
        self._config = copy.deepcopy(preset) if preset is not None else SessionConfig()
        self._listeners: list[Listener] = []
        self._problems: dict[str, str] = {}
        self._model: str | None = None                   # whose input settings the setup holds
        self._inputs_by_model: dict[str, dict[str, Any]] = {}

    # listening ---------------------------------------------------------------
    def subscribe(self, listener: Listener) -> None:
        if listener not in self._listeners:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    # reading -----------------------------------------------------------------
    def get(self, name: str) -> Any:
        """One field's value (a copy: changing it does not change the state)."""
        if name not in FIELD_NAMES:
            raise KeyError(f"no session field {name!r}")
        return copy.deepcopy(_flat(self._config)[name])

    def preset(self) -> SessionConfig:
        """A copy of the whole setup as it stands, checked or not."""
        return copy.deepcopy(self._config)

    def config(self) -> SessionConfig:
        """The setup a job runs with: a checked copy (UserError names the first bad entry)."""
        if self._problems:
            raise UserError("bad-option", next(iter(self._problems.values())))
        return self.preset().checked()

    def config_for(self, path: str | None) -> SessionConfig:
        """The setup a job on the model at `path` runs with: as config(), with the input settings
        kept for that model (a variant's drift runs on its source's inputs, whichever model is
        chosen); a model never chosen gets none, as it would once chosen."""
        config = self.config()
        if path is None or self._model is None or str(path) == self._model:
            return config
        kept = self._inputs_by_model.get(str(path)) or {key: getattr(FeedSpec(), key) for key in MODEL_INPUTS}
        for key in MODEL_INPUTS:
            setattr(config.inputs, key, copy.deepcopy(kept[key]))
        return config

    def problems(self) -> dict[str, str]:
        return dict(self._problems)

    # changing ----------------------------------------------------------------
    def set(self, **values: Any) -> frozenset:
        """Change some fields (pass "inputs.x" fields as set(**{"inputs.x": v})); listeners hear once."""
        unknown = set(values) - FIELD_NAMES
        if unknown:
            raise KeyError(f"no session field(s) {', '.join(sorted(unknown))}")
        top = {k: copy.deepcopy(v) for k, v in values.items() if not k.startswith(INPUTS)}
        feeds = {k[len(INPUTS):]: copy.deepcopy(v) for k, v in values.items() if k.startswith(INPUTS)}
        new = replace(self._config, **top, inputs=replace(self._config.inputs, **feeds))
        return self._change(new, cleared=set(values))

    def update(self, preset: SessionConfig) -> frozenset:
        """Replace the whole setup (a loaded preset, a tuned best, the defaults)."""
        return self._change(copy.deepcopy(preset), cleared=set(FIELD_NAMES))

    def follow_model(self, path: str | None) -> frozenset:
        """Make the input settings those of the model at `path`: sizes found or typed for
        one model (an OCR detector's 640×640) must not run another that shares its input
        names. The current model's are kept for when it is chosen again; a model seen for
        the first time starts with none, but the first model of all keeps what the setup
        has (a loaded preset's). Settings that are not per model (mode, seed, vocabulary)
        stay. None (no model) changes nothing."""
        if path is None or path == self._model:
            return frozenset()
        if self._model is None:
            self._model = path
            return frozenset()
        self._inputs_by_model[self._model] = {key: copy.deepcopy(getattr(self._config.inputs, key))
                                              for key in MODEL_INPUTS}
        self._model = path
        blank = FeedSpec()
        restored = self._inputs_by_model.get(path) or {key: getattr(blank, key) for key in MODEL_INPUTS}
        return self.set(**{INPUTS + key: value for key, value in restored.items()})

    def report_problem(self, name: str, message: str | None) -> None:
        """A form could not read a field (e.g. a bad KEY=VALUE line): jobs refuse with `message`
        until the field is set again; None clears it. The field's value stays the last good one."""
        if name not in FIELD_NAMES:
            raise KeyError(f"no session field {name!r}")
        if message is None:
            self._problems.pop(name, None)
        else:
            self._problems[name] = message

    def _change(self, new: SessionConfig, cleared: set[str]) -> frozenset:
        old, after = _flat(self._config), _flat(new)
        # A field that had a problem is "changed" when set, even to its last good value,
        # so a form redraws the entry it could not read.
        changed = frozenset(name for name in FIELD_NAMES
                            if old[name] != after[name] or (name in cleared and name in self._problems))
        for name in cleared:
            self._problems.pop(name, None)
        self._config = new
        if changed:
            for listener in list(self._listeners):
                listener(self, changed)
        return changed
