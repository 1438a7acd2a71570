"""History tab: every stored result (benchmarks, comparisons, sweeps, profiles, tuning runs,
conversions, drift searches, optimize runs and gates: every kind the registry records);
filter by model and kind, re-open one (chart, its settings and figures in words and tables,
the raw JSON; or in the tab that made it, as its view says: app.gui.shell.result_views) and
run it again with the same settings."""

from __future__ import annotations

import json
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QSplitter,
                               QTabWidget, QTextBrowser)

from app.core.formatting import column_unit, tidy_floats
from app.gui.shell.handover import DriftPair
from app.gui.panels.history.summary import summary_html
from app.gui.shell.panel import Panel

HEADERS = ["#", "Time", "Kind", "Model", "Variant", "Inputs", "Providers", "p50 ms", "p99 ms", "runs/s", "ORT"]
ALL = "All models"
ALL_KINDS = "all kinds"


def inputs_cell(inputs: list[dict]) -> str:
    from app.gui.widgets.run_caption import inputs_text
    return inputs_text(inputs)


class HistoryPanel(Panel):
    title = "History"

    def build(self) -> None:
        from app.gui.widgets.live_plot import LatencyView
        from app.gui.widgets.table import DataTable

        self.entry: dict | None = None
        self.model_filter = QComboBox()
        # long model paths must not push the row's buttons out of a 1024-pixel window
        self.model_filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model_filter.setMinimumContentsLength(18)
        self.kind_filter = QComboBox()
        from app.core.launch.registry import RECORDED_KINDS
        self.kind_filter.addItems([ALL_KINDS, *RECORDED_KINDS])
        self.text_filter = QLineEdit()
        self.text_filter.setPlaceholderText("Filter rows…")
        self.table = DataTable(HEADERS)
        self.table.decimals = 4
        self.table.doubleClicked.connect(lambda _index: self.open_selected())
        # the filters on one row and what to do with the selected result on the next: on one row
        # they ran out of a 1024-pixel window
        filters, buttons = QHBoxLayout(), QHBoxLayout()
        filters.addWidget(QLabel("Model:"))
        filters.addWidget(self.model_filter)
        filters.addWidget(self.kind_filter)
        filters.addWidget(self.text_filter, 1)
        self.actions = {}
        for text, slot in (("Open", self.open_selected), ("Run again", self.rerun_selected),
                           ("Use its settings", self.use_settings), ("Compare and Drift", self.compare_and_drift),
                           ("Delete", self.delete_selected),
                           ("Refresh", self.refresh)):
            button = QPushButton(text)
            button.clicked.connect(lambda _checked=False, s=slot: s())
            (filters if text == "Refresh" else buttons).addWidget(button)
            self.actions[text] = button
        buttons.addStretch(1)
        self.detail_title = QLabel("Select a result and press Open (or double-click it).")
        self.detail_title.setWordWrap(True)
        self.detail_title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.chart = LatencyView()
        self.summary = QTextBrowser()
        self.summary.setPlaceholderText("Open a result to see its settings and figures.")
        self.raw_text = QPlainTextEdit()
        self.raw_text.setReadOnly(True)
        self.details = details = QTabWidget()
        details.addTab(self.chart, "Chart")
        details.addTab(self.summary, "Settings and figures")
        details.addTab(self.raw_text, "Raw JSON")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(details)
        split.setSizes([250, 400])
        self.layout_.addLayout(filters)
        self.layout_.addLayout(buttons)
        self.layout_.addWidget(self.detail_title)
        self.layout_.addWidget(split, 1)
        self.model_filter.currentIndexChanged.connect(lambda _i: self.refresh())
        self.kind_filter.currentIndexChanged.connect(lambda _i: self.refresh())
        self.text_filter.textChanged.connect(self.table.set_filter)
        self.refresh()

    def remembered(self) -> dict:
        return {"kind": self.kind_filter}

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.built:
            self.refresh()

    # the list ------------------------------------------------------------------
    def refresh(self) -> None:
        from app.core.jobs.errors import UserError
        from app.core.store.history import History

        if not self.built:
            return
        history = History()
        try:
            models = history.models()
            entries = self._entries(history, models)
        except UserError as exc:     # the store cannot be read: say so, keep the tab usable
            models, entries = [], []
            self.detail_title.setText(exc.message)
        if history.warnings:
            self.detail_title.setText(history.warnings[-1])
        # the latency columns in the unit their largest figure reads best in
        factor, unit = column_unit([e[key] for e in entries for key in ("p50_ms", "p99_ms") if e[key] is not None])
        headers = [h.replace(" ms", f" {unit}") for h in HEADERS]
        self.table.set_rows([[e["id"], time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e["created"])), e["kind"],
                              Path(e["model_path"]).name, e["variant"], inputs_cell(e["inputs"]), e["providers"],
                              *[None if e[key] is None else e[key] / factor for key in ("p50_ms", "p99_ms")],
                              e["throughput_per_s"], e["ort_version"]] for e in entries], headers)

    def _entries(self, history, models: list[str]) -> list[dict]:
        chosen = self.model_filter.currentData()
        self.model_filter.blockSignals(True)
        self.model_filter.clear()
        self.model_filter.addItem(ALL, None)
        for path in models:
            self.model_filter.addItem(path, path)
        if chosen in models:
            self.model_filter.setCurrentIndex(models.index(chosen) + 1)
        self.model_filter.blockSignals(False)
        kind = self.kind_filter.currentText()
        return history.entries(model=self.model_filter.currentData(), kind=None if kind == ALL_KINDS else kind)

    def selected_id(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        from app.gui.widgets.table import SORT_ROLE
        return int(rows[0].data(SORT_ROLE))

    @staticmethod
    def job_of(entry: dict):
        """The job entry that made a stored result, and its view (None, None: a kind this
        version does not know, from a store another version wrote)."""
        from app.core.launch.registry import recorded_entry
        from app.gui.shell.result_views import RESULT_VIEWS

        job = recorded_entry(entry["kind"])
        return job, RESULT_VIEWS.get(job)

    def _selected_entry(self) -> dict | None:
        from app.core.jobs.errors import UserError
        from app.core.store.history import History

        entry_id = self.selected_id()
        if entry_id is None:
            self.context.show_error("History", "Select a result first.")
            return None
        try:
            return History().get(entry_id)
        except UserError as exc:
            self.context.show_error("History", exc.message)
            return None

    # actions -------------------------------------------------------------------
    def open_selected(self) -> None:
        entry = self._selected_entry()
        if entry is not None:
            self.open_entry(entry)

    def open_entry(self, entry: dict) -> None:
        """Comparisons, sweeps and optimize runs open in their own tabs; the rest here (a benchmark with its
        chart), each with its summary and raw JSON."""
        from html import escape

        from app.core.session.machine import machine_text
        from app.gui.widgets.run_caption import GUESSED, WARN_STYLE, guessed, inputs_text

        self.entry = entry
        report = entry["report"]
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry["created"]))
        inputs = report.get("inputs") or []
        ran_on = (f"on {escape(inputs_text(inputs))}" if inputs else "inputs not recorded") + (
            f" · <span style='{WARN_STYLE}'>{GUESSED}</span>" if guessed(inputs) else "")
        self.detail_title.setText(f"<b>#{entry['id']} {entry['kind']}</b> of {escape(entry['model_path'])} "
                                  f"{ran_on} (sha256 {entry['model_sha256'][:12]}…) — {when}, ONNX Runtime "
                                  f"{entry['ort_version']}, {escape(machine_text(entry['machine']))}")
        self.summary.setHtml(summary_html(entry))
        self.raw_text.setPlainText(json.dumps(tidy_floats({k: v for k, v in report.items() if k != "warmup_ms"}),
                                              indent=2))
        job, view = self.job_of(entry)
        if view is not None and view.reopens:     # here its summary, there the whole result
            self.details.setCurrentWidget(self.summary)
            self.context.show_result(job, report)
            return
        self.chart.set_samples(entry["warmup_ms"], entry["samples_ms"], report.get("concurrency", 1),
                               figures=report.get("latency_ms") if len(entry["samples_ms"]) else None)
        if not len(entry["samples_ms"]):          # nothing to chart: its figures are what it has
            self.details.setCurrentWidget(self.summary)

    def compare_and_drift(self) -> None:
        """A gate (or comparison) on its pair: its comparison in the Compare tab, and the Drift
        tab finding where the new model's values part from the old's."""
        entry = self._selected_entry()
        if entry is None:
            return
        from app.core.drift.jobs import DRIFT

        models = entry["report"].get("models") or []
        job, view = self.job_of(entry)
        if view is None or view.tab != "Compare" or len(models) < 2:
            self.context.show_error("History", "Compare and Drift opens a gate or a comparison of two models.")
            return
        self.context.show_result(job, entry["report"])
        self.context.run_again(DRIFT, DriftPair(models[0]["path"], models[1]["path"]))

    def rerun_selected(self) -> None:
        entry = self._selected_entry()
        if entry is None:
            return
        job, view = self.job_of(entry)
        if view is None or view.again is None:
            self.context.show_error("History", f"A stored {entry['kind']} result runs again from its own tab: open "
                                               "its model there, or use its settings.")
            return
        self.context.run_again(job, view.again(entry))

    def use_settings(self) -> None:
        from app.core.session.config import SessionConfig

        from app.core.jobs.errors import UserError

        entry = self._selected_entry()
        if entry is None:
            return
        try:
            config = SessionConfig.from_dict(entry["session"])
        except UserError as exc:         # a store written by another version, or edited by hand
            self.context.show_error("History", f"The settings of result #{entry['id']} cannot be used: {exc.message}")
            return
        self.context.session.update(config)
        self.detail_title.setText(f"The Session tab now holds the settings of result #{entry['id']}.")

    def delete_selected(self) -> None:
        from PySide6.QtWidgets import QMessageBox
        from app.core.jobs.errors import UserError
        from app.core.store.history import History

        entry_id = self.selected_id()
        if entry_id is None:
            return
        answer = QMessageBox.question(self, "Delete result", f"Delete stored result #{entry_id}?")
        if answer == QMessageBox.StandardButton.Yes:
            try:
                History().delete(entry_id)
            except UserError as exc:
                self.context.show_error("History", exc.message)
            self.refresh()
