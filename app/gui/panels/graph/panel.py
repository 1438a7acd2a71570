"""Graph tab: the current model drawn, laid out by dot in a job (app.core.graph.drawing,
cached by the file's content hash) so the window stays live, with search, a node panel,
overlays of what ORTune measured (profile time, provider, FLOPs, drift, a diff), picture
export and a hand-off to Netron.

Other tabs reach it only through the context: their results arrive by
`context.publish` (kept per model), a table row naming a node by `context.choose_node`."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSplitter

from app.core.graph import overlay
from app.core.graph.cost import count_text
from app.core.graph.details import node_facts
from app.core.graph.jobs import DRAW, DrawParams
from app.core.drift.jobs import DRIFT
from app.core.profile.jobs import PROFILE
from app.core.session.jobs import PLACEMENT
from app.core.graph.structure import search
from app.gui.shell.panel import Panel


class GraphPanel(Panel):
    title = "Graph"

    def __init__(self, context):
        super().__init__(context)
        self.picture: dict | None = None         # structure, layout, key and path of what is drawn
        self.details: dict | None = None         # the drawn model's node details, once they come
        self.expanded: dict[str, set[str]] = {}  # a model's path -> its open control-flow nodes
        self.drifts: dict[str, dict] = {}        # a model's path -> the newest drift result naming it
        self.draw_job = None                      # the drawing job running, superseded by the next one
        self._drawing: tuple | None = None       # (path, expanded) the running job draws
        self._centre_on: str | None = None       # an id to centre once the next picture is shown
        self.selected: str | None = None
        self.matches: list[int] = []
        self.match_at = -1
        self.overlay_lines: dict[str, str] = {}  # id -> what the shown overlay says of it
        self.drawn_text = ""                     # the status line of what is drawn
        self.pending: tuple[str, str] | None = context.chosen_node()
        context.node_chosen.connect(self.choose)
        context.result_made.connect(self._result_made)

    def build(self) -> None:
        from app.gui.panels.graph.tools import DiffBox, ToolsBar
        from app.gui.panels.graph.node_panel import NodePanel
        from app.gui.panels.graph.overlays import OVERLAYS, Legend
        from app.gui.panels.graph.view import GraphView

        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText("Find a node by name, operator or tensor…")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.textChanged.connect(self.find)
        self.search_box.returnPressed.connect(self.next_match)
        self.previous_button, self.next_button = QPushButton("◀ Previous"), QPushButton("Next ▶")
        self.previous_button.clicked.connect(self.previous_match)
        self.next_button.clicked.connect(self.next_match)
        self.match_label = QLabel()
        self.overlay = QComboBox()
        self.overlay.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        for key, text, _ in OVERLAYS:
            self.overlay.addItem(text, key)
        self.overlay.currentIndexChanged.connect(lambda _: self.apply_overlay())
        self.tools = ToolsBar(self)
        bar = QHBoxLayout()
        for widget in (self.search_box, self.previous_button, self.next_button, self.match_label):
            bar.addWidget(widget)
        bar.setStretch(0, 1)
        bar.addSpacing(12)
        bar.addWidget(QLabel("Colour by:"))
        bar.addWidget(self.overlay)
        bar.addWidget(self.tools.measure_button)
        self.layout_.addLayout(bar)
        self.layout_.addWidget(self.tools)
        self.legend = Legend()
        self.layout_.addWidget(self.legend)
        self.status = QLabel("Open a model to draw it.")
        self.status.setTextFormat(Qt.TextFormat.PlainText)   # it shows names from files
        self.status.setWordWrap(True)
        self.layout_.addWidget(self.status)

        self.view = GraphView()
        self.view.node_clicked.connect(lambda node_id: self.select(node_id or None))
        self.view.node_activated.connect(self.toggle)
        self.node_panel = NodePanel()
        self.node_panel.toggle_requested.connect(self.toggle)
        self.diff_box = DiffBox(self)
        side = QSplitter(Qt.Orientation.Vertical)
        side.addWidget(self.node_panel)
        side.addWidget(self.diff_box)
        side.setSizes([500, 200])
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(self.view)
        body.addWidget(side)
        body.setStretchFactor(0, 1)
        body.setSizes([1000, 330])
        self.layout_.addWidget(body, 1)

    # what is drawn -----------------------------------------------------------------------
    def model_changed(self, model) -> None:
        self.tools.model_changed(model)
        if model is None:
            self._clear("Open a model to draw it.")
        elif model.summary is None:
            self._clear(f"{model.label}: reading…")
        elif model.summary.get("format") != "onnx":
            self._clear(f"{model.label} is an ORT-format file, which keeps no graph to draw: draw its .onnx source.")
        elif self.picture is None or self.picture["path"] != model.path:
            self.draw(model.path)

    def _clear(self, text: str) -> None:
        self.picture = self.details = None
        self.view.clear()
        self.node_panel.clear()
        self.diff_box.clear()
        self.status.setText(text)

    def draw(self, path: str, details: bool = True) -> None:
        """Start the drawing job for the model at `path` (with its open nodes)."""
        expanded = self.expanded.setdefault(path, set())
        wanted = (path, tuple(sorted(expanded)))
        if self.draw_job is not None and self._drawing == wanted:
            return
        if self.draw_job is not None:
            self.draw_job.cancel()
        self._drawing = wanted
        if self.picture is None or self.picture["path"] != path:
            self.details = None
        self.status.setText("Laying out the graph…")
        job = self.jobs.start(f"Draw {Path(path).name}", DRAW,
                              DrawParams(path=path, expanded=list(wanted[1]), details=details or self.details is None),
                              on_data=lambda kind, payload: self._picture(path, payload) if kind == "picture" else None,
                              on_result=lambda result: self._details(job, path, result),
                              on_error=lambda exc: self._failed(job, exc))
        self.draw_job = job

    def _current_path(self) -> str | None:
        model = self.context.current_model()
        return model.path if model is not None else None

    def _picture(self, path: str, payload: dict) -> None:
        from app.gui.panels.graph.canvas import GraphCanvas
        from app.gui.widgets.theme import is_dark, plot_colors

        if path != self._current_path():
            return
        first = self.picture is None or self.picture["path"] != path
        self.picture = payload
        self.view.show_canvas(GraphCanvas(payload, dark=is_dark()), plot_colors()["background"])
        self.drawn_text = drawn_text(payload)
        self.status.setText(self.drawn_text)
        if first:
            self.view.start_view()
        if self.selected is not None and self.selected not in self.view.canvas.index:
            self.selected = None
        self.select(self._centre_on or self.selected, centre=self._centre_on is not None)
        self._centre_on = None
        self.find(self.search_box.text())
        self.apply_overlay()
        if self.pending is not None and self.pending[0] == path:
            self.choose(*self.pending)

    def _details(self, job, path: str, result: dict) -> None:
        if self.draw_job is job:
            self.draw_job = None
        if path != self._current_path() or result["details"] is None:
            return
        self.details = result["details"]
        self.select(self.selected)
        self.apply_overlay()

    def _failed(self, job, exc) -> None:
        if self.draw_job is job:
            self.draw_job = None
            self.status.setText(f"The graph could not be drawn: {getattr(exc, 'message', exc)}")

    def toggle(self, node_id: str) -> None:
        """Open or close a control-flow node's bodies (laid out again; each set is cached)."""
        if self.picture is None:
            return
        node = next((n for n in self.picture["structure"]["nodes"] if n["id"] == node_id), None)
        if node is None or not node["bodies"]:
            return
        expanded = self.expanded.setdefault(self.picture["path"], set())
        if node_id in expanded:
            expanded -= {n for n in expanded if n == node_id or n.startswith(node_id + "/")}
        else:
            expanded.add(node_id)
        self._centre_on = node_id
        self.selected = node_id
        self.draw(self.picture["path"], details=False)

    # choosing nodes ----------------------------------------------------------------------
    def select(self, node_id: str | None, centre: bool = False) -> None:
        canvas = self.view.canvas
        if canvas is None:
            return
        index = canvas.index.get(node_id) if node_id else None
        self.selected = node_id if index is not None else None
        canvas.select(index)
        if index is None:
            self.node_panel.clear()
            return
        if centre:
            self.view.centre_on(index)
        node = canvas.nodes[index]
        details = node_facts(self.details, node_id) if self.details else None
        line = self.overlay_lines.get(node_id, "")
        profile = self.context.latest(PROFILE, self.picture["path"])
        if profile and self.details:
            reached = overlay.achieved([node], profile, self.details)["values"].get(node_id)
            if reached:
                line += ("<br>" if line else "") + f"Achieved {count_text(reached)}FLOP/s in the profile"
            by_type = overlay.achieved_by_type(canvas.nodes, profile, self.details).get(node["op_type"])
            if by_type:
                line += (("<br>" if line else "") + f"All {node['op_type']} nodes together: "
                         f"{count_text(by_type)}FLOP/s")
        self.node_panel.show_node(node, details, node_id in canvas.expanded, line)

    def choose(self, path: str, name: str) -> None:
        """A table elsewhere named a node: select and centre it (once drawn, if it is not yet)."""
        self.pending = (path, name)
        if not self.built or self.picture is None or self.picture["path"] != path:
            return
        canvas = self.view.canvas
        index = next((i for i, n in enumerate(canvas.nodes) if n["name"] == name and n["kind"] == "op"), None)
        if index is not None:
            self.pending = None
            self.select(canvas.ids[index], centre=True)

    # search ------------------------------------------------------------------------------
    def find(self, text: str) -> None:
        canvas = self.view.canvas
        if canvas is None:
            return
        found = search(canvas.nodes, text)
        self.matches = [canvas.index[i] for i in found]
        self.match_at = -1
        canvas.mark(self.matches)
        inside = len(search(self.picture["structure"]["nodes"], text)) - len(found) if text.strip() else 0
        self.match_label.setText((f"{len(found):,} found" if text.strip() else "")
                                 + (f" (+{inside:,} in closed bodies)" if inside > 0 else ""))

    def next_match(self) -> None:
        self._step(1)

    def previous_match(self) -> None:
        self._step(-1)

    def _step(self, step: int) -> None:
        if not self.matches:
            return
        self.match_at = (self.match_at + step) % len(self.matches)
        self.select(self.view.canvas.ids[self.matches[self.match_at]], centre=True)
        self.match_label.setText(f"{self.match_at + 1:,} of {len(self.matches):,}")

    # overlays ----------------------------------------------------------------------------
    def sources(self) -> dict:
        path = self.picture["path"] if self.picture else ""
        return {"profile": self.context.latest(PROFILE, path), "placement": self.context.latest(PLACEMENT, path),
                "details": self.details, "drift": self.drifts.get(path) or self.context.latest(DRIFT, path),
                "diff": self.diff_box.result_for(path)}

    def apply_overlay(self) -> None:
        from app.gui.panels.graph.overlays import paint

        canvas = self.view.canvas
        if canvas is None:
            return
        kind = self.overlay.currentData()
        painted = paint(kind, canvas.ids, canvas.nodes, self.sources())
        self.tools.show_action(kind, painted)
        if isinstance(painted, str):
            canvas.set_fill(None)
            self.overlay_lines = {}
            self.legend.show_entries([], painted)
        else:
            canvas.set_fill(painted.fill, painted.palette)
            self.overlay_lines = painted.lines
            self.legend.show_entries(painted.legend, painted.note)
        self.select(self.selected)

    def show_overlay(self, kind: str) -> None:
        self.overlay.setCurrentIndex(self.overlay.findData(kind))
        self.apply_overlay()

    def show_drift(self, result: dict) -> None:
        """A drift result (app.core.drift): drawn on its source and on its variant."""
        for path in (result.get("source"), result.get("variant")):
            if path:
                self.drifts[path] = result
        if self.built:
            self.show_overlay("drift")

    def _result_made(self, job, path: str, result: dict) -> None:
        if job is DRIFT:
            self.drifts[path] = result
            self.show_drift(result)
        elif self.built and self.picture is not None and path == self.picture["path"]:
            self.apply_overlay()


def drawn_text(picture: dict) -> str:
    """What is drawn, counted as the Overview counts nodes (operators, bodies' too): the
    graph's inputs and outputs are boxes here but not nodes there."""
    layout = picture["layout"]
    kinds = {n["id"]: n["kind"] for n in picture["structure"]["nodes"]}
    drawn = sum(kinds[i] == "op" for i in layout["ids"])
    boxes = len(layout["ids"]) - drawn
    hidden = sum(kind == "op" for kind in kinds.values()) - drawn
    how = "from the cache" if picture["cached"] else f"laid out in {picture['seconds']:.2f} s"
    return (f"{drawn:,} nodes drawn (+ {boxes:,} input and output boxes), {layout['arrow_count']:,} arrows ({how})"
            + (f"; {hidden:,} more nodes inside closed bodies: double-click an If, Loop or Scan to open it"
               if hidden else ""))
