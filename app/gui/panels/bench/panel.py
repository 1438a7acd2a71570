"""Benchmark tab: run the current model with the Session tab's settings in a child
process, draw every run live, and show the figures; a Sweep page measures a grid."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QGridLayout, QGroupBox, QHBoxLayout, QLabel, QSizePolicy, QTabWidget, QVBoxLayout,
                               QWidget)

from app.core.units import human_bytes
from app.gui.widgets.clipped import breakable
from app.gui.widgets.run_caption import stored_text
from app.gui.widgets.run_form import RunSettingsForm, ms_text
from app.gui.shell.panel import OneJobView, Panel, start_and_cancel
from app.core.bench.bench import RunSettings
from app.core.bench.jobs import BENCH, BenchParams, SweepParams
from app.core.session.plugins import devices_text

LIVE_KEYS = ["mean", "p50", "p90", "p95", "p99", "p999", "min", "max", "std"]
WARN_STYLE = "color: #c0392b;"
FIGURE_ROWS = 8           # the figures' grid: 15 figures in two columns
STATS_EVERY = 5           # live figures refresh every 5th redraw (about 6 times a second)


class BenchmarkPanel(OneJobView, Panel):
    title = "Benchmark"

    def build(self) -> None:
        from app.gui.widgets.live_plot import LatencyView
        from app.gui.panels.bench.sweep import SweepView
        from app.gui.widgets.run_caption import RunCaption

        self.job = None
        self.report: dict | None = None
        self.planned: dict | None = None         # the running job's inputs, once its child planned them
        self.shown: tuple | None = None          # show_report's arguments: the result on screen
        self._before: tuple | None = None        # what was on screen when the running job started
        self._running: tuple[str, str, float] | None = None   # path, label, start time
        self._ticks = 0
        self.tabs = QTabWidget()
        self.layout_.addWidget(self.tabs)
        live = QWidget()
        self.tabs.addTab(live, "Live")
        self.sweep = SweepView(self)
        self.tabs.addTab(self.sweep, "Sweep")

        self.run_form = RunSettingsForm()
        self.run_form.layout().setVerticalSpacing(2)     # compact rows leave the plots room at 1024x700
        self.start_button, self.cancel_button, buttons = start_and_cancel(self.start, self.cancel)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)   # it shows names from files
        self.status.setWordWrap(True)
        # A fixed box: the text changes several times a second and must not re-lay out the tab.
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        # Two lines across the whole tab (below the form and the figures, not under the form alone).
        self.status.setFixedHeight(2 * self.status.fontMetrics().lineSpacing())
        left = QVBoxLayout()
        left.addWidget(self.run_form)
        left.addLayout(buttons)
        left.addStretch()

        stats_box = QGroupBox("Figures")
        grid = QGridLayout(stats_box)
        grid.setVerticalSpacing(2)
        self.values: dict[str, QLabel] = {}
        names = LIVE_KEYS + ["throughput", "runs", "session creation", "first run", "peak RSS", "GPU memory"]
        for index, name in enumerate(names):
            label = QLabel("–")
            label.setMinimumWidth(label.fontMetrics().horizontalAdvance("0,000,000.0 /s"))
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.values[name] = label
            # two columns of figures, so the tab fits beside the model list in a 1024-pixel window
            grid.addWidget(QLabel(name + ":"), index % FIGURE_ROWS, 2 * (index // FIGURE_ROWS))
            grid.addWidget(label, index % FIGURE_ROWS, 2 * (index // FIGURE_ROWS) + 1)
        self.stats_note = QLabel("")
        grid.addWidget(self.stats_note, FIGURE_ROWS, 0, 1, 4)
        self.guess_note = QLabel()
        self.guess_note.setWordWrap(True)
        self.guess_note.setStyleSheet(WARN_STYLE)
        self.guess_note.hide()
        grid.addWidget(self.guess_note, FIGURE_ROWS + 1, 0, 1, 4)
        top = QHBoxLayout()
        top.addLayout(left)
        top.addWidget(stats_box, 1)
        self.view = LatencyView()
        self.view.redrawn.connect(self._redrawn)
        self.caption = RunCaption("No run yet: the figures and the chart will say which model and inputs they "
                                  "measured.")
        self.caption.follow(stats_box, self.view)
        layout = QVBoxLayout(live)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.caption)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.view, 1)

    def remembered(self) -> dict:
        sweep = self.sweep
        return {**self.run_form.remembered(), "log_scale": self.view.log_scale,
                **sweep.run_form.remembered("sweep_"), "sweep_dim_values": sweep.dim_values,
                "sweep_concurrency_values": sweep.concurrency_values, "sweep_limit": sweep.limit,
                "sweep_percentile": sweep.percentile}

    def model_changed(self, model) -> None:
        if self.job is None:
            self.status.setText("Open a model to benchmark it." if model is None else
                                f"Ready: {breakable(model.label)} with the Session tab's settings.")
        self.caption.model_changed(model)
        self.sweep.model_changed(model)

    # stored results ----------------------------------------------------------------
    def open_result(self, kind: str, result: dict) -> None:
        """A stored sweep opens on the Sweep page; a benchmark's figures on the first."""
        if kind == "sweep":
            self.tabs.setCurrentWidget(self.sweep)
            self.sweep.show_result(result, note="re-opened from History")
        else:
            self.tabs.setCurrentIndex(0)
            self.show_report(result, note="re-opened from History")

    def run_again(self, kind: str, entry: dict) -> None:
        from app.core.session.config import SessionConfig
        config, run = SessionConfig.from_dict(entry["session"]), RunSettings.from_dict(entry["run"])
        if kind == "sweep":
            self.tabs.setCurrentWidget(self.sweep)
            report = entry["report"]
            self.sweep.start(SweepParams(path=entry["model_path"], session=config, run=run, **{
                key: report[key] for key in ("dim", "dim_values", "concurrency_values", "latency_limit_ms",
                                             "limit_percentile")}))
        else:
            self.tabs.setCurrentIndex(0)
            self.start(entry["model_path"], config, run, label=entry["variant"] or "")

    # running -------------------------------------------------------------------
    def start(self, path: str | None = None, config=None, run: RunSettings | None = None, label: str = "") -> None:
        """Benchmark `path` (default: the current model) with `config` (default: the Session tab's)."""

        self.ensure_built()
        model = self.context.current_model()
        if path is None:
            if model is None:
                self.context.show_error("Benchmark", "Open a model first.")
                return
            path, label = model.path, model.label
        config = config or self.context.session_config("Benchmark")
        if config is None:
            return
        if run is not None:
            self.run_form.set_settings(run)
        run = self.run_form.settings()
        label = label or path
        self._before = (self.shown, self.view.series, self.view.figures, self.report)
        self.report, self.planned = None, None
        self._running = (path, label, time.time())
        self.caption.clear()
        self.caption.running(label)
        self._show_guesses([])
        self.view.reset(run.concurrency)
        self.view.start()
        for value in self.values.values():
            value.setText("–")
        self.stats_note.setText("live figures are read from the histogram (within about 1 %); exact ones follow")
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Measuring {label}…")
        self.job = self.jobs.start(f"Benchmark {label}", BENCH,
                                   BenchParams(path=path, session=config, run=run, variant=label),
                                   on_data=self._on_data, on_result=self._on_result, on_error=self._on_error,
                                   on_progress=lambda _f, message: self.status.setText(f"{label}: {message}"))

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def _on_data(self, kind: str, payload) -> None:
        if kind == "latency":
            self.view.add_batch(payload["phase"], payload["ns"])
        elif kind == "inputs" and self._running is not None:
            self.planned = payload
            path, label, started = self._running
            self.caption.show_run(path, label, payload["inputs"], started, note="measuring…")
            self._show_guesses(payload["inputs"])
            self.context.report_inputs(path, payload["inputs"])

    def _on_error(self, exc) -> None:
        from app.core.jobs.errors import JobCancelled

        job = self.job
        super()._on_error(exc)
        path, label, started = self._running
        self._running = None
        nothing_run = not (self.view.series.count or self.view.series.warmup.size)
        if isinstance(exc, JobCancelled) and nothing_run and self._before and self._before[0]:
            self._show_before()
        elif isinstance(exc, JobCancelled):
            self._show_partial(path, label, started)
            self.jobs.note(job, f"cancelled after {self.view.series.count:,} runs")   # the dock says what the tab says
        elif self.planned is not None:
            self.caption.show_run(path, label, self.planned["inputs"], started, note="stopped by an error")
        else:
            self.caption.stopped()

    def _show_before(self) -> None:
        """Cancelled before its first run (while the session was being made): the result that
        was on screen comes back, and the status says the new run measured nothing."""
        shown, series, figures, self.report = self._before
        self.view.restore(series, figures)
        self.show_report(*shown)
        self.status.setText("Cancelled before the first run: nothing measured; the previous result is shown.")

    def _show_partial(self, path: str, label: str, started: float) -> None:
        """A cancelled run keeps what it measured, marked as partial."""
        stats = self.view.series.stats()
        count = stats["count"]
        note = f"partial — cancelled after {count:,} runs"
        if count:
            for key in LIVE_KEYS:
                self.values[key].setText(ms_text(stats[key]))
            self.values["throughput"].setText(f"≈ {stats['throughput_per_s']:,.1f} /s")
            self.values["runs"].setText(f"{count:,}")
        self.stats_note.setText(note + " (figures read from the histogram)")
        self.status.setText(f"{label}: {note}; nothing stored.")
        self.caption.show_run(path, label, (self.planned or {}).get("inputs", []), started, note=note)

    def _finished(self) -> None:
        super()._finished()
        self.view.stop()

    def show_result(self, report: dict) -> None:
        path, label, _ = self._running
        self._running = None
        self.report = report
        self.show_report(report, path, label)
        self.view.show_figures(report["latency_ms"])
        policy = report.get("session", {}).get("device_policy", "none")
        picked = f" (the device policy {policy} picked {devices_text(report.get('devices', []))})" if policy != "none" else ""
        self.status.setText(f"Done: {report['iterations']:,} runs on {', '.join(report['providers'])}{picked}"
                            + stored_text(report))

    def show_report(self, report: dict, path: str | None = None, label: str = "", note: str = "") -> None:
        """The exact figures of a finished (or stored) benchmark, titled with what it ran on."""
        path = path or report["model"]["path"]
        self.shown = (report, path, label, note)
        self.caption.show_run(path, label or report.get("variant") or "", report.get("inputs"),
                              report.get("created"), note=note, load=report.get("load"))
        self._show_guesses(report.get("inputs"))
        for key in LIVE_KEYS:
            self.values[key].setText(ms_text(report["latency_ms"][key]))
        self.values["throughput"].setText(f"{report['throughput_per_s']:,.1f} /s")
        self.values["runs"].setText(f"{report['iterations']:,} (+{report['warmup']} warm-up)")
        self.values["session creation"].setText(ms_text(report["session_create_ms"]))
        self.values["first run"].setText(ms_text(report["first_run_ms"]))
        self.values["peak RSS"].setText(human_bytes(report["peak_rss_bytes"]))
        gpu = report.get("gpu_memory_bytes")
        self.values["GPU memory"].setText("–" if gpu is None else human_bytes(gpu))
        self.stats_note.setText("exact figures from all measured runs")

    def _show_guesses(self, inputs) -> None:
        from app.gui.widgets.run_caption import GUESSED, guessed

        rows = [row for row in inputs or [] if row["name"] in guessed(inputs)]
        self.guess_note.setText(f"{GUESSED} — " + "; ".join(f"{r['name']}: {r['reason']}" for r in rows))
        self.guess_note.setVisible(bool(rows))

    def _redrawn(self) -> None:
        self._ticks += 1
        if self.job is None or self._ticks % STATS_EVERY:
            return
        stats = self.view.series.stats()
        if stats["count"]:
            for key in LIVE_KEYS:
                self.values[key].setText(ms_text(stats[key]))
            self.values["throughput"].setText(f"≈ {stats['throughput_per_s']:,.1f} /s")
            self.values["runs"].setText(f"{stats['count']:,}")
