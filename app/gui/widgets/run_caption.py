"""What a result ran on, said above it: the model, the inputs' shapes and the time of the
run. The caption also keeps old numbers from passing as current: while a new run is on,
or once another model is chosen, the results it labels are greyed and it says whose they are."""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsColorizeEffect, QLabel, QWidget

from app.core.facts import FactBook, Figure, figures_text
from app.core.session.inputs import origin_word
from app.core.session.load import busy_note
from app.gui.widgets.plain_text import plain

#: said beside inputs whose sizes nothing in the model or from the user gave (batch 1, 224 pixels …)
GUESSED = "sizes chosen by default: check them"
WARN_STYLE = "color: #c0392b;"
GREY = "#a0a0a0"              # the wash over results that are no longer current
NARROWEST_PX = 160            # the caption's least width, whatever the name it shows
#: every figure of a model's p50 the window showed in this sitting (the app's one window, from
#: start to quit), whichever tab measured it
SITTING = FactBook()


def shape_text(shape) -> str:
    """[1, 128] -> '1×128'; a scalar -> 'scalar'."""
    if shape is None:
        return "?"
    return "×".join(str(d) for d in shape) if len(shape) else "scalar"


def inputs_text(inputs) -> str:
    """The inputs' shapes and where their values came from, in the same words on every tab:
    'input_ids 1×128 (your file), attention_mask 1×128 (generated)'."""
    return ", ".join(f"{row['name']} {shape_text(row.get('shape'))} ({origin_word(row)})" for row in inputs or [])


def guessed(inputs) -> list[str]:
    """The inputs whose shape was chosen by default, not found."""
    return [row["name"] for row in inputs or [] if row.get("source") == "default"]


def stored_text(result: dict) -> str:
    """Where a finished result was kept: its number in the history, or why it is not stored."""
    if result.get("history_id"):
        return f" — stored as result {result['history_id']}"
    warnings = result.get("history_warnings") or []
    return f" — {warnings[-1]}" if warnings else ""


def clock(when: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when if when is not None else time.time()))


@dataclass
class ShownRun:
    path: str
    label: str
    inputs: list = field(default_factory=list)
    when: float | None = None
    note: str = ""
    load: dict | None = None  # the machine's load while it was timed (app.core.session.load)
    paths: tuple = ()        # every model the run measured (a comparison's), the first `path`
    detail: str = ""         # how to read the figures (a speedup's definition), under the heading
    also: str = ""           # the same facts measured elsewhere in this sitting (app.core.facts)


@dataclass(frozen=True)
class Timed:
    """A model's p50 a result shows, to put beside the same fact's other figures: `label`
    names the model where a result shows several."""
    path: str
    inputs: list
    session: dict | None
    p50_ms: float | None
    how: str
    label: str = ""


def also_text(where: str, when: float, timed: list[Timed]) -> str:
    """Keeps each timed p50 in the sitting's book and says the same facts' other figures."""
    parts = []
    for one in timed:
        if one.p50_ms is None:
            continue
        text = figures_text(SITTING.add(one.path, one.inputs, one.session, Figure(where, one.how, one.p50_ms, when)))
        if text:
            parts.append(f"{one.label}: {text}" if one.label and len(timed) > 1 else text)
    return " ".join(parts)


class RunCaption(QLabel):
    """A result's heading. `follow(widgets)` names what it labels, to grey with it.

    States: "empty" (nothing shown), "current", "running" (a new run is on; earlier results
    greyed), "earlier" (a new run stopped without results), "previous" (another model chosen)."""

    def __init__(self, idle_text: str = ""):
        super().__init__()
        self.idle_text = idle_text
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.run: ShownRun | None = None
        self.state = "empty"
        self.results: list[QWidget] = []
        self._model_path: str | None = None
        self._running_label = ""
        self.setText(idle_text)

    def minimumSizeHint(self) -> QSize:  # noqa: N802  (Qt's naming)
        # a long file name has no place to wrap, and a word-wrapped label is never narrower than
        # its longest word: that widened a tab past a 1024-pixel window (its tables' verdicts out
        # of view); past NARROWEST_PX the name is cut at the edge and whole in the tooltip
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), NARROWEST_PX), hint.height())

    def follow(self, *widgets: QWidget) -> None:
        self.results.extend(widgets)

    # what happens ------------------------------------------------------------------------
    def show_run(self, path: str, label: str, inputs, when: float | None = None, note: str = "",
                 paths=(), detail: str = "", load: dict | None = None, where: str = "",
                 timed: list[Timed] = ()) -> None:
        """A run's results are shown (just finished, or re-opened). `paths`: all the models it
        measured, when more than one (it stays current while any of them is chosen). `load`:
        the machine's while it was timed; a busy one is said in the same words on every tab.
        `timed`: the p50s it shows, said beside their other figures of this sitting, from
        other tabs (`where` names this one)."""
        when = when if when is not None else time.time()
        self.run = ShownRun(str(path), label or Path(path).name, list(inputs or []), when, note, load,
                            tuple(str(p) for p in paths) or (str(path),), detail,
                            also_text(where, when, list(timed)) if timed and not note else "")
        if self._model_path not in self.run.paths:
            self._model_path = self.run.path
        self._set("current")

    def running(self, label: str) -> None:
        """A new run started: what is shown is no longer current."""
        self._running_label = label
        self._set("running")

    def stopped(self) -> None:
        """The new run ended without results: the shown ones stay greyed as an earlier run's."""
        self._set("earlier" if self.run is not None else "empty")

    def model_changed(self, model) -> None:
        self._model_path = model.path if model is not None else None
        if self.state == "running" or self.run is None:
            return
        if self._model_path not in self.run.paths:
            self._set("previous")
        elif self.state == "previous":
            self._set("current")

    def clear(self) -> None:
        self.run = None
        self._set("empty")

    @property
    def current(self) -> bool:
        return self.state == "current"

    # drawing -------------------------------------------------------------------------------
    def _set(self, state: str) -> None:
        self.state = state
        active = state in ("current", "empty")
        for widget in self.results:
            widget.setEnabled(active)
            # Charts draw their own colours whatever the enabled state: wash them grey instead
            # (opaque, unlike an opacity effect, which lets stale pixels of other tabs show through).
            if active:
                widget.setGraphicsEffect(None)
            elif widget.graphicsEffect() is None:
                grey = QGraphicsColorizeEffect(widget)
                grey.setColor(QColor(GREY))
                grey.setStrength(0.85)
                widget.setGraphicsEffect(grey)
        self.setText(self._text())
        self.setToolTip(plain(self.run.label) if self.run is not None else "")

    def _text(self) -> str:
        run = self.run
        if self.state == "running":
            lead = f"Measuring <b>{html.escape(self._running_label)}</b>…"
            return lead + (f" <span style='color: gray'>(greyed: the earlier run, "
                           f"{html.escape(run.label)} at {clock(run.when)[11:]})</span>" if run else "")
        if run is None:
            return html.escape(self.idle_text)
        inputs = html.escape(inputs_text(run.inputs)) or "inputs not reported"
        body = f"<b>{html.escape(run.label)}</b> · {inputs} · {clock(run.when)}"
        if run.note:
            body += f" · <span style='{WARN_STYLE}'>{html.escape(run.note)}</span>"
        if guessed(run.inputs):
            body += f" · <span style='{WARN_STYLE}'>{GUESSED}</span>"
        if busy := busy_note(run.load):
            body += f"<br><span style='{WARN_STYLE}'>{html.escape(busy)}</span>"
        if run.detail:
            body += f"<br><small>{html.escape(run.detail)}</small>"
        if run.also:
            body += f"<br><small>{html.escape(run.also)}</small>"
        if self.state == "previous":
            return f"<span style='color: gray'>previous model: {body}</span>"
        if self.state == "earlier":
            return f"<span style='color: gray'>earlier run (the last one stopped): {body}</span>"
        return body
