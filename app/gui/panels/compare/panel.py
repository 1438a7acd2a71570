"""Compare tab: the models selected in the list, each in a process of its own with the same
session and inputs, timed in alternation; a table with each speedup's interval and verdict,
speedup bars with their intervals, grouped latency bars and throughput bars."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout

from app.core.bench.accuracy import accuracy_text
from app.core.units import human_bytes
from app.gui.shell.panel import OneJobView, Panel
from app.gui.widgets.run_caption import stored_text
from app.core.bench.jobs import COMPARE

HEADERS = ["Model", "Size", "p50 ms", "p90 ms", "p99 ms", "runs/s", "Speedup", "95 % interval", "Verdict", "max |Δ|",
           "Cosine", "Providers", "Accuracy (data folder)"]


class ComparePanel(OneJobView, Panel):
    title = "Compare"

    def build(self) -> None:
        from app.gui.widgets.run_form import RunSettingsForm
        from app.gui.widgets.charts import GroupedBarChart
        from app.gui.widgets.chart_base import BarChart
        from app.gui.widgets.table import DataTable

        self.job = None
        self.result: dict | None = None
        self.hint = QLabel("Select two or more models or variants in the list (Ctrl+click). The one highest in the "
                           "list is the reference for speedup and fidelity.")
        self.hint.setWordWrap(True)
        self.run_form = RunSettingsForm("Each model")
        self.start_button = QPushButton("Compare selected")
        self.start_button.clicked.connect(lambda: self.start())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.job and self.job.cancel())
        export_table = QPushButton("Export table as CSV…")
        export_table.clicked.connect(lambda: self.table.export_csv())
        export_charts = QPushButton("Export charts as PNG…")
        export_charts.clicked.connect(lambda: self.export_charts())
        self.drift_button = QPushButton("Where does it drift?")
        self.drift_button.setToolTip("Open the Drift tab on the selected model (or the second) against the reference.")
        self.drift_button.setEnabled(False)
        self.drift_button.clicked.connect(lambda: self.show_drift())
        self.status = QLabel()
        self.status.setWordWrap(True)
        left = QVBoxLayout()
        left.addWidget(self.hint)
        left.addWidget(self.run_form)
        for button in (self.start_button, self.cancel_button, export_table, export_charts, self.drift_button):
            left.addWidget(button)
        left.addWidget(self.status)
        left.addStretch()

        self.table = DataTable(HEADERS)
        self.speedup_chart = BarChart("Speedup", horizontal=False)
        self.speedup_whiskers = None
        self.latency_chart = GroupedBarChart("Latency (ms)")
        self.throughput_chart = BarChart("Throughput (runs/s)", horizontal=False)
        charts = QSplitter(Qt.Orientation.Horizontal)
        charts.addWidget(self.speedup_chart)
        charts.addWidget(self.latency_chart)
        charts.addWidget(self.throughput_chart)
        self.definition = QLabel()
        self.definition.setWordWrap(True)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.table)
        right.addWidget(charts)
        right.addWidget(self.definition)
        right.setSizes([200, 400, 40])
        layout = QHBoxLayout()
        layout.addLayout(left)
        layout.addWidget(right, 1)
        self.layout_.addLayout(layout)

    def selected_models(self) -> list:
        return self.context.selected_models()

    def open_result(self, kind: str, result: dict) -> None:
        self.show_result(result)

    def run_again(self, kind: str, entry: dict) -> None:
        from app.core.session.config import SessionConfig
        models = [{"path": r["path"], "label": r["label"]} for r in entry["report"]["models"]]
        self.start(models, SessionConfig.from_dict(entry["session"]), entry["run"])

    def start(self, models: list[dict] | None = None, config=None, run: dict | None = None) -> None:
        """Compare `models` ([{path, label}], default: the selection) with `config` (default: the Session tab's)."""
        from app.core.jobs.errors import UserError

        self.ensure_built()
        if models is None:
            models = [{"path": m.path, "label": m.label if m.kind == "source" else f"{m.label} [{m.kind}]"}
                      for m in self.selected_models()]
        if len(models) < 2:
            self.context.show_error("Compare", "Select at least two models or variants in the list (Ctrl+click).")
            return
        try:
            config = config or self.context.session.config()
        except UserError as exc:
            self.context.show_error("Compare", exc.message)
            return
        if run is not None:
            self.run_form.set_settings(run)
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Comparing {len(models)} models…")
        self.job = self.jobs.start(
            f"Compare {', '.join(m['label'] for m in models)}", COMPARE,
            {"models": models, "session": config.to_dict(), "run": self.run_form.settings()},
            on_result=self._on_result, on_error=self._on_error,
            on_progress=lambda _f, message: self.status.setText(message))

    def show_result(self, result: dict) -> None:
        from app.gui.widgets.theme import series_colors

        self.ensure_built()
        self.result = result
        rows = []
        for row in result["models"]:
            fidelity = row["fidelity"] or {}
            interval = row.get("speedup_ci")
            rows.append([row["label"], human_bytes(row["size_bytes"]), row["latency_ms"]["p50"],
                         row["latency_ms"]["p90"], row["latency_ms"]["p99"], row["throughput_per_s"], row["speedup"],
                         f"{interval[0]:.3f} – {interval[1]:.3f}" if interval else "not measured",
                         row.get("verdict", "one after the other"),
                         fidelity.get("max_abs_diff", "reference" if row["fidelity"] is None else None),
                         fidelity.get("min_cosine"), ", ".join(row["providers"]), accuracy_text(row.get("accuracy"))])
        self.table.decimals = 4
        self.table.set_rows(rows)
        labels = [row["label"] for row in result["models"]]
        self._show_speedups(result)
        self.latency_chart.set_groups(["p50", "p90", "p99"],
                                      [(row["label"], [row["latency_ms"][k] for k in ("p50", "p90", "p99")])
                                       for row in result["models"]], "ms")
        colors = series_colors()
        self.throughput_chart.set_bars(labels, [row["throughput_per_s"] for row in result["models"]], "runs/s",
                                       brushes=[colors[i % len(colors)] for i in range(len(labels))])
        self.status.setText(f"Reference: {result['baseline']}" + stored_text(result))
        self.drift_button.setEnabled(len(result["models"]) > 1)

    def show_drift(self) -> None:
        """The Drift tab on the selected row's model (the second, when none or the reference is selected)."""
        models = self.result["models"]
        index = self.table.currentIndex()
        row = self.table.proxy.mapToSource(index).row() if index.isValid() else 1
        self.context.run_again("drift", {"source": models[0]["path"], "variant": models[row or 1]["path"]})

    def _show_speedups(self, result: dict) -> None:
        """Speedup bars with their 95 % intervals as whiskers, and what speedup means."""
        import numpy as np
        import pyqtgraph as pg

        models, baseline = result["models"], result["baseline"]
        self.speedup_chart.set_bars([row["label"] for row in models], [row["speedup"] or 0.0 for row in models],
                                    "speedup")
        # the definition is spelled out under the charts: a long title would widen the chart past its place
        self.speedup_chart.plot.setTitle("Speedup (whiskers: 95 % interval)")
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
            self.speedup_chart.plot.autoRange()
        plan = result.get("alternation")
        if plan:
            definition = result["speedup_definition"].replace("reference", baseline, 1)
            self.definition.setText(
                f"Measured in alternation: {plan['rounds_run']} rounds of {plan['block_runs']} runs per model, one "
                f"model at a time. {definition[:1].upper() + definition[1:]}. "
                f"Above 1: faster than {baseline}. Verdict: {plan['verdict_rule']}.")
        else:
            self.definition.setText(f"Speedup: {baseline}'s p50 over each model's p50, measured one after the "
                                    "other (a result stored before comparisons alternated): no interval, no verdict.")

    def export_charts(self, folder: str | None = None) -> list[str]:
        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, "Folder for the chart images")
        if not folder:
            return []
        names = {"compare-speedup.png": self.speedup_chart, "compare-latency.png": self.latency_chart,
                 "compare-throughput.png": self.throughput_chart}
        targets = [Path(folder) / name for name in names]
        existing = [t.name for t in targets if t.exists()]
        if existing:
            from PySide6.QtWidgets import QMessageBox
            answer = QMessageBox.question(self, "Replace files?", f"{', '.join(existing)} already exist in {folder}. "
                                                                 "Replace them?")
            if answer != QMessageBox.StandardButton.Yes:
                return []
        return [chart.export_png(str(Path(folder) / name)) for name, chart in names.items()]
