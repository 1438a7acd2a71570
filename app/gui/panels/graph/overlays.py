"""The overlays: one colour per drawn node from a measurement (see app.core.graph.overlay
for where the values come from), the legend that reads them, and the line the node
panel shows. Nodes an overlay has no value for are grey."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel

from app.core.graph import overlay
from app.core.graph.cost import count_text

#: (key, menu text, what it needs to draw when there is nothing yet)
OVERLAYS = [
    ("none", "Operator families", ""),
    ("profile", "Profile time per node", "no profile of this model yet: profile it here or in the Profile tab"),
    ("provider", "Execution provider", "no placement of this model yet: show it here or in Session › Placement"),
    ("flops", "FLOPs per node", "the node costs are still being worked out"),
    ("drift", "Drift per tensor", "no drift result for this model yet (the Drift view makes one)"),
    ("diff", "Diff", "no diff yet: choose a model to diff against"),
]
RAMP = ["#fff1bf", "#fdd08a", "#f79d5c", "#e35d3c", "#b0232b"]
NO_VALUE = "#d7d9dc"
WARNING = "#d62f2f"
PROVIDER_COLOURS = ["#4f8fd6", "#5cb06a", "#9b6fd0", "#d6a13f", "#4fb3b3", "#c2458f"]
DIFF_COLOURS = {"added": "#4caf50", "changed": "#f0a030", "unchanged": "#eef0f2"}


@dataclass
class Painted:
    fill: np.ndarray | None                      # colour index per drawn node (None: operator families)
    palette: list[QColor] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)   # (colour, text)
    note: str = ""
    lines: dict[str, str] = field(default_factory=dict)           # id -> what the overlay says of it


def _micros(value: float) -> str:
    return f"{value / 1000:.3g} ms" if value >= 1000 else f"{value:.3g} µs"


def _ramp(ids: list[str], values: dict[str, float], text) -> Painted:
    positive = [v for v in values.values() if v > 0]
    fill = np.zeros(len(ids), dtype=np.int32)
    palette = [QColor(NO_VALUE)] + [QColor(c) for c in RAMP]
    if not positive:
        return Painted(fill, palette, [(NO_VALUE, "no value")])
    low, high = min(positive), max(positive)
    edges = np.geomspace(low, high, len(RAMP) + 1) if high > low else np.array([low] * (len(RAMP) + 1))
    for i, node_id in enumerate(ids):
        value = values.get(node_id)
        if value is not None and value > 0:
            fill[i] = 1 + min(len(RAMP) - 1, int(np.searchsorted(edges[1:-1], value, side="right")))
    legend = [(RAMP[k], f"{text(edges[k])}–{text(edges[k + 1])}") for k in range(len(RAMP)) if high > low]
    legend = legend or [(RAMP[0], text(high))]
    return Painted(fill, palette, legend + [(NO_VALUE, "no value")],
                   lines={k: text(v) for k, v in values.items()})


def _matched(found: dict, what: str) -> str:
    if not found["unmatched"]:
        return ""
    return (f"{found['unmatched']} of {found['total']} {what} are not in this drawing: ONNX Runtime's optimiser "
            "made them (layout reorders, casts); fused nodes count on the node they kept")


def _categories(ids: list[str], values: dict[str, str], colours: dict[str, str]) -> tuple[np.ndarray, list[QColor]]:
    names = list(colours)
    fill = np.array([names.index(values[i]) + 1 if values.get(i) in colours else 0 for i in ids], dtype=np.int32)
    return fill, [QColor(NO_VALUE)] + [QColor(colours[n]) for n in names]


def paint(kind: str, ids: list[str], nodes: list[dict], sources: dict) -> Painted | str:
    """The overlay `kind` over the drawn nodes, or the line saying what it still needs."""
    if kind == "none":
        from app.gui.panels.graph.canvas import DARK, LIGHT, WORDS
        from app.gui.widgets.theme import is_dark
        colours = DARK if is_dark() else LIGHT
        return Painted(None, legend=[(colours[name], WORDS[name]) for name in colours])
    needs = next(text for key, _, text in OVERLAYS if key == kind)
    if kind == "profile" and sources.get("profile"):
        found = overlay.profile_times(nodes, sources["profile"])
        painted = _ramp(ids, found["values"], _micros)
        painted.lines = {k: f"Profile: {_micros(v)} per run" for k, v in found["values"].items()}
        painted.lines.update(_absorbed_lines(found["absorbed"], {n["id"]: n for n in nodes}))
        painted.note = _matched(found, "timed nodes")
        if found["absorbed"]:
            painted.legend[-1] = (NO_VALUE, "no time of its own (fused or removed by ORT)")
        return painted
    if kind == "flops" and sources.get("details"):
        found = overlay.flops(sources["details"])
        painted = _ramp(ids, found["values"], lambda v: f"{count_text(v)}FLOPs")
        painted.lines = {k: f"{count_text(v)}FLOPs" for k, v in found["values"].items()}
        return painted
    if kind == "provider" and sources.get("placement"):
        found = overlay.providers(nodes, sources["placement"])
        warned = overlay.fallbacks(sources["placement"])
        names = sorted(set(found["values"].values()), key=lambda p: (p in warned, p))
        colours = {p: WARNING if p in warned else PROVIDER_COLOURS[i % len(PROVIDER_COLOURS)]
                   for i, p in enumerate(names)}
        fill, palette = _categories(ids, found["values"], colours)
        short = {p: p.replace("ExecutionProvider", "") for p in names}
        legend = [(colours[p], short[p] + (" (fallback)" if p in warned else "")) for p in names]
        return Painted(fill, palette, legend + [(NO_VALUE, "not placed")], _matched(found, "placed nodes"),
                       {k: f"Runs on {short[v]}" + (" — a CPU fallback" if v in warned else "")
                        for k, v in found["values"].items()})
    if kind == "drift" and sources.get("drift"):
        found = overlay.drift(nodes, sources["drift"])
        bands = {"past tolerance": WARNING, "SQNR < 30 dB": "#f0a030", "SQNR 30–50 dB": "#c5e1a5",
                 "SQNR ≥ 50 dB": "#4caf50"}

        def band(row: dict) -> str:
            sqnr = row["sqnr_db"]
            if row["passed"] is False:
                return "past tolerance"
            return ("SQNR ≥ 50 dB" if sqnr is None or sqnr >= 50 else "SQNR 30–50 dB" if sqnr >= 30
                    else "SQNR < 30 dB")

        fill, palette = _categories(ids, {k: band(v) for k, v in found["values"].items()}, bands)
        return Painted(fill, palette, list(zip(bands.values(), bands)) + [(NO_VALUE, "not compared")],
                       _matched(found, "compared tensors"),
                       {k: f"Drift of {escape(v['tensor'])}: SQNR "
                           f"{'∞' if v['sqnr_db'] is None else format(v['sqnr_db'], '.1f')} dB"
                           + (" — past tolerance" if v["passed"] is False else "") for k, v in found["values"].items()})
    if kind == "diff" and sources.get("diff"):
        found = overlay.diff_states(nodes, sources["diff"])
        values = {i: found["values"].get(i, "unchanged") for i, n in zip(ids, nodes) if n["kind"] == "op"}
        fill, palette = _categories(ids, values, DIFF_COLOURS)
        removed = len(sources["diff"].get("removed", []))
        changes = {row["name"]: row["changes"] for row in sources["diff"].get("changed", [])}
        lines = {k: f"Diff: {v}" for k, v in found["values"].items()}
        for node_id, node in zip(ids, nodes):
            if found["values"].get(node_id) == "changed":
                lines[node_id] += "<br>" + "<br>".join(_change_text(c) for c in changes.get(node["name"], []))
        return Painted(fill, palette, [(c, s) for s, c in DIFF_COLOURS.items()],
                       f"{removed} node(s) removed: listed below, not in this drawing" if removed else "", lines)
    return needs


def _absorbed_lines(absorbed: dict[str, str], by_id: dict[str, dict]) -> dict[str, str]:
    """What the node panel says of a node ORT did not run under its own name."""
    lines = {}
    for node_id, kept in absorbed.items():
        if kept:
            into = by_id.get(kept, {})
            lines[node_id] = escape(f"Profile: fused by ORT into {into.get('op_type', '')} {into.get('name', kept)}; "
                                    "its time counts there")
        else:
            lines[node_id] = "Profile: removed by ORT's optimiser (it did not run)"
    return lines


def _change_text(change: dict) -> str:
    """One change of a node (app.core.graph.diff) as a line: what, before → after."""
    def facts(value) -> str:
        if isinstance(value, dict):
            return " ".join(str(value[k]) for k in ("dtype", "shape") if k in value) or "?"
        return "–" if value is None else str(value)

    what = change["what"] + (f" {change['name']}" if change.get("name") else "")
    return escape(f"{what}: {facts(change.get('a'))[:60]} → {facts(change.get('b'))[:60]}")


class Legend(QLabel):
    """A swatch per colour and what it means, then a note: one text that wraps where the
    window is narrow."""

    def __init__(self):
        super().__init__()
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.entries: list[tuple[str, str]] = []
        self.note = ""

    @staticmethod
    def _visible(colour: str) -> str:
        """A near-white colour a shade darker, so its swatch shows on the window's background."""
        shade = QColor(colour)
        return shade.darker(125).name() if shade.lightness() > 215 else colour

    def show_entries(self, entries: list[tuple[str, str]], note: str = "") -> None:
        self.entries, self.note = list(entries), note
        swatches = "&nbsp;&nbsp; ".join(
            f"<span style='color: {self._visible(colour)}'>&#9632;&#9632;</span>&nbsp;"
            f"{escape(text).replace(' ', '&nbsp;')}" for colour, text in entries)
        self.setText(swatches + (f"&nbsp;&nbsp; <i>{escape(note)}</i>" if note else ""))
