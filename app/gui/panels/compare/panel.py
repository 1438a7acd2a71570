"""Compare tab: the models selected in the list, each benchmarked in a fresh process
with the same session and inputs; a table, grouped latency bars and throughput bars."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout

from app.core.units import human_bytes
from app.gui.shell.panel import OneJobView, Panel
from app.core.bench.jobs import COMPARE

HEADERS = ["Model", "Size", "p50 ms", "p90 ms", "p99 ms", "runs/s", "Speedup", "max |Δ|", "Cosine", "Providers"]


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
        self.status = QLabel()
        self.status.setWordWrap(True)
        left = QVBoxLayout()
        left.addWidget(self.hint)
        left.addWidget(self.run_form)
        for button in (self.start_button, self.cancel_button, export_table, export_charts):
            left.addWidget(button)
        left.addWidget(self.status)
        left.addStretch()

        self.table = DataTable(HEADERS)
        self.latency_chart = GroupedBarChart("Latency (ms)")
        self.throughput_chart = BarChart("Throughput (runs/s)", horizontal=False)
        charts = QSplitter(Qt.Orientation.Horizontal)
        charts.addWidget(self.latency_chart)
        charts.addWidget(self.throughput_chart)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.table)
        right.addWidget(charts)
        right.setSizes([200, 400])
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
            rows.append([row["label"], human_bytes(row["size_bytes"]), row["latency_ms"]["p50"],
                         row["latency_ms"]["p90"], row["latency_ms"]["p99"], row["throughput_per_s"], row["speedup"],
                         fidelity.get("max_abs_diff", "reference" if row["fidelity"] is None else None),
                         fidelity.get("min_cosine"), ", ".join(row["providers"])])
        self.table.decimals = 4
        self.table.set_rows(rows)
        labels = [row["label"] for row in result["models"]]
        self.latency_chart.set_groups(["p50", "p90", "p99"],
                                      [(row["label"], [row["latency_ms"][k] for k in ("p50", "p90", "p99")])
                                       for row in result["models"]], "ms")
        colors = series_colors()
        self.throughput_chart.set_bars(labels, [row["throughput_per_s"] for row in result["models"]], "runs/s",
                                       brushes=[colors[i % len(colors)] for i in range(len(labels))])
        self.status.setText(f"Reference: {result['baseline']}" + (
            f" — stored as result {result['history_id']}" if result.get("history_id") else ""))

    def export_charts(self, folder: str | None = None) -> list[str]:
        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, "Folder for the chart images")
        if not folder:
            return []
        targets = [Path(folder) / "compare-latency.png", Path(folder) / "compare-throughput.png"]
        existing = [t.name for t in targets if t.exists()]
        if existing:
            from PySide6.QtWidgets import QMessageBox
            answer = QMessageBox.question(self, "Replace files?", f"{', '.join(existing)} already exist in {folder}. "
                                                                 "Replace them?")
            if answer != QMessageBox.StandardButton.Yes:
                return []
        return [self.latency_chart.export_png(str(Path(folder) / "compare-latency.png")),
                self.throughput_chart.export_png(str(Path(folder) / "compare-throughput.png"))]
