"""Compare tab: the models selected in the list, each in a process of its own with the same
session and inputs, timed in alternation; a table with each speedup's interval and verdict,
speedup bars with their intervals, grouped latency bars and throughput bars. A caption says
which models ran on which inputs when, and how to read a speedup; a cancelled comparison
shows the rounds it measured, marked partial."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton

from app.core.bench.compare import COMPARE_HEADERS, compare_table
from app.core.bench.generation import GENERATION_HEADERS, generation_table
from app.core.formatting import cosine_text, diff_text, ratio_text
from app.gui.shell.job_control import JobControl, RunOf
from app.gui.shell.handover import DriftPair
from app.gui.shell.panel import Panel
from app.gui.widgets.replace import confirm_replace
from app.gui.widgets.captioned import CaptionedResults, settings_beside
from app.gui.widgets.run_caption import Timed, inputs_text, stored_text
from app.core.bench.jobs import COMPARE, CompareParams

CHART_LABEL_CHARS = 28     # a bar's label; a longer one would be dropped by the axis for want of room


class ComparePanel(Panel):
    title = "Compare"

    def build(self) -> None:
        self.result: dict | None = None
        self.partial: dict | None = None         # what a cancelled comparison measured
        results = self._build_results()
        self.caption = results.caption
        self.control = JobControl(self.jobs, self.start, "Compare selected", caption=self.caption, parent=self)
        self.control.stopped.connect(self._stopped)
        self.layout_.addLayout(settings_beside(self._build_settings(), results))

    def _build_settings(self) -> list:
        """The settings column: what to select, how to run each model, Start, exports, Drift."""
        from app.gui.widgets.pairs_form import PairsForm
        from app.gui.widgets.run_form import RunSettingsForm

        self.hint = QLabel("Select two or more models or variants in the list (Ctrl+click). The one highest in the "
                           "list is the reference for speedup and fidelity.")
        self.hint.setWordWrap(True)
        self.run_form = RunSettingsForm("Each model")
        self.pairs_form = PairsForm()
        # two to a row: one to a row, the drift button sat below the fold of a 1024×700 window
        export_table = QPushButton("Table as CSV…")
        export_table.setToolTip("Export the table as CSV.")
        export_table.clicked.connect(lambda: self.table.export_csv())
        export_charts = QPushButton("Charts as PNG…")
        export_charts.setToolTip("Export the three charts as PNG images.")
        export_charts.clicked.connect(lambda: self.export_charts())
        exports = QHBoxLayout()
        exports.addWidget(export_table)
        exports.addWidget(export_charts)
        self.drift_button = QPushButton("Where does it drift?")
        self.drift_button.setToolTip("Open the Drift tab on the selected model (or the second) against the reference.")
        self.drift_button.setEnabled(False)
        self.drift_button.clicked.connect(lambda: self.show_drift())
        return [self.hint, self.run_form, self.pairs_form, self.control.buttons, self.control.progress, exports,
                self.drift_button, self.control.status]

    def _build_results(self) -> CaptionedResults:
        """The table, and the speedup, latency, throughput and generation charts beside it."""
        from app.gui.widgets.charts import GroupedBarChart
        from app.gui.widgets.chart_base import BarChart
        from app.gui.widgets.table import DataTable

        self.table = DataTable(COMPARE_HEADERS)
        self.table.key_columns = ("Verdict",)      # long model names give up width first
        self.table.column_formats = {"Speedup": ratio_text, "max |Δ|": diff_text, "Cosine": cosine_text}
        self.speedup_chart = BarChart("Speedup", horizontal=False, placeholder="No comparison yet.",
                                      value_format=ratio_text)
        self.speedup_whiskers = None
        self.latency_chart = GroupedBarChart("Latency", placeholder="No comparison yet.")
        self.throughput_chart = BarChart("Throughput (runs/s)", horizontal=False, placeholder="No comparison yet.")
        # two decoders: their time to the first token and tokens/s, each phase timed in alternation
        self.generation_table = DataTable(GENERATION_HEADERS)
        self.generation_table.column_formats = {"TTFT speedup": ratio_text, "Tokens/s speedup": ratio_text}
        charts = ((self.speedup_chart, "Speedup"), (self.latency_chart, "Latency"),
                  (self.throughput_chart, "Throughput"), (self.generation_table, "Generation"))
        results = CaptionedResults("No comparison yet: the table and the charts will say which models and inputs "
                                   "they measured.", self.table, charts, (250, 350))
        self.tabs = results.charts
        self.tabs.setTabVisible(self.tabs.indexOf(self.generation_table), False)
        return results

    def remembered(self) -> dict:
        return {**self.run_form.remembered(), **self.pairs_form.remembered()}

    def model_changed(self, model) -> None:
        self.caption.model_changed(model)

    def selected_models(self) -> list:
        return self.context.selected_models()

    def open_result(self, job, result: dict) -> None:
        self.show_result(result, note="re-opened from History")

    def run_again(self, job, entry: dict) -> None:
        from app.core.session.config import SessionConfig
        from app.core.measure.runs import RunSettings
        models = [{"path": r["path"], "label": r["label"]} for r in entry["report"]["models"]]
        self.start(models, SessionConfig.from_dict(entry["session"]), RunSettings.from_dict(entry["run"]))

    def start(self, models: list[dict] | None = None, config=None, run=None) -> None:
        """Compare `models` ([{path, label}], default: the selection) with `config` (default: the Session tab's)
        and `run` (RunSettings; default: the form's)."""

        self.ensure_built()
        if models is None:
            models = [{"path": m.path, "label": m.label if m.kind == "source" else f"{m.label} [{m.kind}]"}
                      for m in self.selected_models()]
        if len(models) < 2:
            self.context.show_error("Compare", "Select at least two models or variants in the list (Ctrl+click).")
            return
        # the reference's inputs (its sizes typed or found), not the current model's: Ctrl+click
        # makes the last variant clicked current, and a variant never chosen has no sizes of its own
        config = config or self.context.session_config("Compare", models[0]["path"])
        if config is None:
            return
        if run is not None:
            self.run_form.set_settings(run)
        self.partial = None
        self.control.run(
            f"Compare {', '.join(m['label'] for m in models)}", COMPARE,
            CompareParams(models=models, session=config, run=self.run_form.settings(), **self.pairs_form.values()),
            lambda result, _run: self.show_result(result), subject=RunOf(models[0]["path"], _label(models)),
            on_data=self.receive, message=f"Comparing {len(models)} models…")

    def receive(self, kind: str, payload) -> None:
        """What the running comparison sends: the reference's inputs, and what it measured so far."""
        run = self.control.subject
        if kind == "inputs" and self.job is not None:
            self.context.report_inputs(run.path, payload["inputs"])
            self.caption.running(f"{run.label} on {inputs_text(payload['inputs'])}")
        elif kind == "compare-partial":
            self.partial = payload

    def _stopped(self, exc, _run: RunOf) -> None:
        """A cancelled comparison shows the rounds it measured, marked partial."""
        from app.core.jobs.errors import JobCancelled

        if isinstance(exc, JobCancelled) and self.partial is not None:
            rounds = self.partial["alternation"]["rounds_run"]
            self.show_result(self.partial, note=f"partial — cancelled after {rounds} rounds; not stored")
            self.control.say(f"Cancelled: showing the {rounds} rounds measured, marked partial.")

    def show_result(self, result: dict, note: str = "") -> None:
        from app.gui.widgets.theme import series_colors

        self.ensure_built()
        self.result = result
        paths = [row.get("path") or row["label"] for row in result["models"]]
        how = "beside the others, in alternation" if "verdict" in result["models"][-1] else "one after the other"
        self.caption.show_run(paths[0], _label(result["models"]), result.get("inputs"), result.get("created"),
                              note=note, paths=paths, detail=_definition(result), where="Compare",
                              timed=[Timed(row.get("path") or "", result.get("inputs"), result.get("session"),
                                           row["latency_ms"]["p50"], how, row["label"])
                                     for row in result["models"] if row.get("path")])
        headers, rows = compare_table(result)
        self.table.decimals = 4
        self.table.set_rows(rows, headers)
        labels = chart_labels([row["label"] for row in result["models"]])
        self._show_speedups(result)
        self.latency_chart.set_groups(["p50", "p90", "p99"],
                                      [(label, [row["latency_ms"][k] for k in ("p50", "p90", "p99")])
                                       for label, row in zip(labels, result["models"])], "ms")
        colors = series_colors()
        self.throughput_chart.set_bars(labels, [row["throughput_per_s"] for row in result["models"]], "runs/s",
                                       brushes=[colors[i % len(colors)] for i in range(len(labels))])
        generation = result.get("generation")
        self.generation_table.set_rows(generation_table(generation)[1] if generation else [])
        self.tabs.setTabVisible(self.tabs.indexOf(self.generation_table), bool(generation))
        if not result.get("partial"):
            self.control.say("Done: the first model is the reference" + stored_text(result))
        self.drift_button.setEnabled(len(result["models"]) > 1 and not result.get("partial"))

    def show_drift(self) -> None:
        """The Drift tab on the selected row's model (the second, when none or the reference is selected)."""
        models = self.result["models"]
        index = self.table.currentIndex()
        row = self.table.proxy.mapToSource(index).row() if index.isValid() else 1
        from app.core.drift.jobs import DRIFT
        self.context.run_again(DRIFT, DriftPair(models[0]["path"], models[row or 1]["path"]))

    def _show_speedups(self, result: dict) -> None:
        """Speedup bars with their 95 % intervals as whiskers."""
        import numpy as np
        import pyqtgraph as pg

        models = result["models"]
        self.speedup_chart.set_bars(chart_labels([row["label"] for row in models]),
                                    [row["speedup"] or 0.0 for row in models],
                                    "speedup")
        # the definition is in the caption above: a long title would widen the chart past its place
        self.speedup_chart.set_title("Speedup (whiskers: 95 % interval)")
        if self.speedup_whiskers is not None:
            self.speedup_chart.plot.removeItem(self.speedup_whiskers)
            self.speedup_whiskers = None
        measured = [(i, row) for i, row in enumerate(models) if row.get("speedup_ci") and row["verdict"] != "reference"]
        if measured:
            speedup = np.array([row["speedup"] for _, row in measured])
            low, high = np.array([row["speedup_ci"] for _, row in measured]).T
            self.speedup_whiskers = pg.ErrorBarItem(
                x=np.array([i for i, _ in measured], dtype=float), y=speedup, bottom=speedup - low,
                top=high - speedup, beam=0.2, pen=pg.mkPen(self.speedup_chart.colors["foreground"]))
            self.speedup_chart.plot.addItem(self.speedup_whiskers)
            tops = [row["speedup"] or 0.0 for row in models]
            for (index, _), top in zip(measured, high):
                tops[index] = float(top)
            self.speedup_chart.raise_values(tops)           # each value above its whisker, not across it
            self.speedup_chart.fit(float(low.min()), float(high.max()))

    def export_charts(self, folder: str | None = None) -> list[str]:
        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, "Folder for the chart images")
        if not folder:
            return []
        names = {"compare-speedup.png": self.speedup_chart, "compare-latency.png": self.latency_chart,
                 "compare-throughput.png": self.throughput_chart}
        targets = [Path(folder) / name for name in names]
        existing = [t for t in targets if t.exists()]
        if existing and not confirm_replace(self, existing):
            return []
        return [chart.export_png(str(Path(folder) / name)) for name, chart in names.items()]


def _short(label: str, most: int = CHART_LABEL_CHARS) -> str:
    """A model's label short enough to sit under its bar (the table and the caption have it whole)."""
    return label if len(label) <= most else label[:most // 2 - 1] + "…" + label[-(most // 2):]


def chart_labels(labels: list[str], most: int = CHART_LABEL_CHARS) -> list[str]:
    """Each model's label under its bar, cut in its middle; labels that cut to the same text
    what follows the start they share instead: "x.int8-dynamic.onnx [int8-dynamic]" and its
    ".repaired" copy both cut to "nudenet_320n.…[int8-dynamic]", two bars no one could tell apart."""
    from os.path import commonprefix

    shorts = [_short(label, most) for label in labels]
    alike = {short: commonprefix([label for label, other in zip(labels, shorts) if other == short])
             for short in shorts if shorts.count(short) > 1}
    return [short if short not in alike else "…" + _short(label[len(alike[short]):], most - 1)
            for short, label in zip(shorts, labels)]


def _label(models: list[dict]) -> str:
    return " vs ".join(model["label"] for model in models)


def _definition(result: dict) -> str:
    """How to read the speedups: what they divide, how they were measured (models timed one
    after the other have no alternation), what a verdict says."""
    plan = result["alternation"]
    measured = (f"as the median over {plan['rounds_run']} rounds in which each model ran {plan['block_runs']} runs in "
                f"turn; whiskers and the interval column: its 95 % interval. Verdict: {plan['verdict_rule']}."
                if plan else "timed one after the other: no interval, no verdict.")
    return (f"Speedup = reference p50 / model p50, the reference being {result['baseline']} (above 1: faster than it), "
            + measured)
