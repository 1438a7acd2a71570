"""The Graph tab's second row and its diff list: fit, export, Netron, the run an overlay
needs (one click: a profile or a placement with the Session tab's settings), and the
diff against another open model, drawn and listed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QMenu, QPushButton, QVBoxLayout, QWidget

from app.core.graph.jobs import DIFF, NETRON, DiffParams, NetronParams
from app.core.graph.netron import INSTALL_HINT, netron_installed
from app.core.jobs.entry import Job
from app.core.profile.jobs import PROFILE, ProfileParams
from app.core.session.jobs import PLACEMENT, PlacementParams

PROFILE_RUNS = 10


@dataclass(frozen=True)
class OverlayRun:
    """The run an overlay needs, one click away: its job's entry and parameters, and its words."""
    job: Job
    params: Callable[[str, object], object]   # params(model path, the Session tab's config)
    doing: str                                # "Profiling …" while it runs
    first: str                                # the button before the overlay was painted
    again: str                                # the button once it was
    plans_inputs: bool = False                # its result names the inputs it ran on


#: overlay -> the run that paints it
OVERLAY_RUNS = {
    "profile": OverlayRun(PROFILE, lambda path, config: ProfileParams(model=path, session=config, runs=PROFILE_RUNS),
                          "Profiling", "Profile now", "Profile again", plans_inputs=True),
    "provider": OverlayRun(PLACEMENT, lambda path, config: PlacementParams(path=path, session=config),
                           "Placing", "Show placement", "Place again"),
}


class ToolsBar(QWidget):
    def __init__(self, panel):
        super().__init__()
        self.panel = panel
        self.netron_jobs: dict[str, object] = {}
        self.png_export = None                      # the PNG being saved, in its own thread
        self.fit_button = QPushButton("Fit")
        self.fit_button.clicked.connect(lambda: panel.view.fit())
        self.export_button = QPushButton("Export")
        menu = QMenu(self.export_button)
        menu.addAction("PNG image…", lambda: self.export_dialog("png"))
        menu.addAction("SVG drawing…", lambda: self.export_dialog("svg"))
        self.export_button.setMenu(menu)
        self.netron_button = QPushButton("Open in Netron")
        self.netron_button.setToolTip("Netron's own view, served on this machine and opened in your browser"
                                      if netron_installed() else INSTALL_HINT)
        self.netron_button.clicked.connect(self.open_in_netron)
        self.partner = QComboBox()
        self.partner.setMinimumContentsLength(12)
        self.partner.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.diff_button = QPushButton("Diff")
        self.diff_button.setToolTip("Nodes added, removed and changed against the chosen model")
        self.diff_button.clicked.connect(self.start_diff)
        self.measure_button = QPushButton()
        self.measure_button.hide()
        self.measure_button.clicked.connect(self.measure)
        self._measure_kind = ""
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Diff against:"))
        row.addWidget(self.partner, 1)
        row.addWidget(self.diff_button)
        row.addSpacing(12)
        for button in (self.fit_button, self.export_button, self.netron_button):
            row.addWidget(button)

    @property
    def context(self):
        return self.panel.context

    def model_changed(self, model) -> None:
        """Offer the other open models to diff against; a variant's source (or a source's
        first variant) first."""
        self.partner.clear()
        if model is None:
            return
        others = [m for m in self.context.open_models() if m is not model]
        others.sort(key=lambda m: not (m is model.parent or m.parent is model))     # stable: list order next
        for other in others:
            self.partner.addItem(other.label, other.path)
        self.diff_button.setEnabled(bool(others))

    # the run an overlay needs --------------------------------------------------------------
    def show_action(self, kind: str, painted) -> None:
        run = OVERLAY_RUNS.get(kind)
        self._measure_kind = kind
        self.measure_button.setVisible(run is not None)
        self.measure_button.setText("" if run is None else run.first if isinstance(painted, str) else run.again)

    def measure(self) -> None:
        run = OVERLAY_RUNS.get(self._measure_kind)
        model = self.context.current_model()
        if run is None or model is None:
            return
        config = self.context.session_config("Graph")
        if config is None:
            return
        self.measure_button.setEnabled(False)
        self.panel.status.setText(f"{run.doing} {model.label} with the Session tab's settings…")

        def done(result: dict) -> None:
            self.measure_button.setEnabled(True)
            self.panel.status.setText(self.panel.drawn_text)
            if run.plans_inputs:
                self.context.report_inputs(model.path, result.get("inputs") or [])
            self.context.publish(run.job, model.path, result)

        self.context.jobs.start(f"{run.job.name.title()} {model.label}", run.job, run.params(model.path, config),
                                on_result=done, on_error=lambda _exc: self._measure_failed())

    def _measure_failed(self) -> None:
        self.measure_button.setEnabled(True)
        self.panel.status.setText(self.panel.drawn_text)

    # diff ------------------------------------------------------------------------------------
    def start_diff(self) -> None:
        model, other = self.context.current_model(), self.partner.currentData()
        if model is None or not other:
            return
        self.diff_button.setEnabled(False)

        def done(result: dict) -> None:
            self.diff_button.setEnabled(True)
            self.panel.diff_box.show_diff(model.path, result)
            self.panel.show_overlay("diff")

        self.context.jobs.start(f"Diff {Path(other).name} → {model.label}", DIFF, DiffParams(a=other, b=model.path),
                                on_result=done, on_error=lambda _exc: self.diff_button.setEnabled(True))

    # pictures and Netron -------------------------------------------------------------------
    def export_dialog(self, kind: str) -> None:
        """Ask where to save the picture: in the folder the user's outputs go to."""
        from app.core.store.paths import output_dir

        picture = self.panel.picture
        if picture is None:
            return
        folder = Path(self.context.settings.convert_output_dir or output_dir())
        name = str(folder / f"{Path(picture['path']).stem}-graph.{kind}")
        target, _ = QFileDialog.getSaveFileName(self, f"Export the graph as {kind.upper()}", name,
                                                f"{kind.upper()} (*.{kind})")
        if target:
            self.export(kind, target)

    def export(self, kind: str, target: str) -> None:
        """SVG here; a PNG (seconds for a large model) in a thread of its own (PngExport)."""
        from app.gui.panels.graph.export import PngExport, export_svg
        from app.gui.widgets.theme import plot_colors

        view = self.panel.view
        if kind == "png":
            if self.png_export is not None:
                self.context.show_status("A picture of the graph is still being saved.", 5000)
                return
            self.png_export = PngExport(view.canvas, target, plot_colors()["background"])
            self.png_export.saved.connect(lambda path: self.context.show_status(f"Graph saved: {path}", 8000))
            self.png_export.failed.connect(lambda text: self.context.show_error("Export the graph", text))
            self.png_export.finished.connect(self._png_done)
            self.export_button.setEnabled(False)
            self.context.show_status(f"Saving the graph as {Path(target).name}…", 0)
            self.png_export.start()
            return
        try:
            export_svg(view.scene(), view.canvas.boundingRect(), target, Path(self.panel.picture["path"]).name)
        except OSError as exc:
            self.context.show_error("Export the graph", str(exc))
            return
        self.context.show_status(f"Graph saved: {target}", 8000)

    def _png_done(self) -> None:
        self.png_export.deleteLater()
        self.png_export = None
        self.export_button.setEnabled(True)

    def open_in_netron(self) -> None:
        model = self.context.current_model()
        if model is None:
            return
        if not netron_installed():
            self.panel.status.setText(INSTALL_HINT)
            return
        running = self.netron_jobs.get(model.path)
        if running is not None and running.state == "running":
            self.panel.status.setText(f"Netron already serves {model.label}: see the Jobs dock (Cancel stops it).")
            return

        def serving(kind: str, payload: dict) -> None:
            if kind == "serving":
                self.panel.status.setText(f"Netron serves {model.label} at {payload['url']} (opened in your "
                                          "browser; cancel its job in the Jobs dock to stop it).")

        self.netron_jobs[model.path] = self.context.jobs.start(f"Netron: {model.label}", NETRON,
                                                               NetronParams(path=model.path), on_data=serving)


class DiffBox(QWidget):
    """The diff's nodes in a table (removed ones too, which the drawing cannot show);
    choosing a row chooses its node in the drawing."""

    def __init__(self, panel):
        from app.gui.widgets.table import DataTable

        super().__init__()
        self.panel = panel
        self.results: dict[str, dict] = {}
        self.heading = QLabel("No diff yet: choose a model above and press Diff.")
        self.heading.setTextFormat(Qt.TextFormat.PlainText)   # it shows names from files
        self.heading.setWordWrap(True)
        self.table = DataTable(["Change", "Node", "Operator", "What changed"])
        self.table.key_columns = ("What changed",)     # a long node name gives up width first
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._chosen())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.table, 1)

    def result_for(self, path: str) -> dict | None:
        return self.results.get(path)

    def clear(self) -> None:
        self.table.set_rows([])

    def show_diff(self, path: str, result: dict) -> None:
        self.results[path] = result
        rows = []
        for state in ("added", "removed", "changed"):
            for row in result[state]:
                what = ", ".join(c.get("name", c["what"]) if c["what"] in ("attribute", "initializer") else c["what"]
                                 for c in row.get("changes", []))
                rows.append([state, row["name"], row["op_type"], what])
        self.heading.setText(f"{Path(result['a']).name} → {Path(result['b']).name}: {len(result['added'])} added, "
                             f"{len(result['removed'])} removed, {len(result['changed'])} changed, "
                             f"{result['matched'] - len(result['changed'])} unchanged")
        self.table.set_rows(rows)

    def _chosen(self) -> None:
        index = self.table.currentIndex()
        if not index.isValid() or self.panel.picture is None:
            return
        state = self.table.proxy.index(index.row(), 0).data()
        name = self.table.proxy.index(index.row(), 1).data()
        if state != "removed":
            self.panel.choose(self.panel.picture["path"], name)
