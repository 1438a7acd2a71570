"""Benchmark tab: run the current model with the Session tab's settings in a child
process, draw every run live, and show the figures; a Sweep page measures a grid."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QGridLayout, QGroupBox, QHBoxLayout, QLabel, QSizePolicy, QTabWidget, QVBoxLayout,
                               QWidget)

from app.core.formatting import human_bytes
from app.gui.widgets.clipped import breakable
from app.gui.widgets.run_caption import Timed, stored_text
from app.gui.widgets.run_form import RunSettingsForm, ms_text
from app.gui.shell.job_control import JobControl, RunOf
from app.gui.shell.panel import Panel
from app.core.measure.runs import RunSettings
from app.core.bench.jobs import BENCH, SWEEP, BenchParams, SweepParams
from app.core.session.plugins import devices_text

LIVE_KEYS = ["mean", "p50", "p90", "p95", "p99", "p999", "min", "max", "std"]
WARN_STYLE = "color: #c0392b;"
FIGURE_ROWS = 8           # the figures' grid: 15 figures in two columns
STATS_EVERY = 5           # live figures refresh every 5th redraw (about 6 times a second)


class BenchmarkPanel(Panel):
    title = "Benchmark"

    def build(self) -> None:
        from app.gui.widgets.live_plot import LatencyView
        from app.gui.panels.bench.sweep import SweepView
        from app.gui.widgets.run_caption import RunCaption

        self.report: dict | None = None
        self.planned: dict | None = None         # the running job's inputs, once its child planned them
        self.shown: tuple | None = None          # show_report's arguments: the result on screen
        self._before: tuple | None = None        # what was on screen when the running job started
        self._ticks = 0
        self.tabs = QTabWidget()
        self.layout_.addWidget(self.tabs)
        live = QWidget()
        self.tabs.addTab(live, "Live")
        self.sweep = SweepView(self)
        self.tabs.addTab(self.sweep, "Sweep")

        self.caption = RunCaption("No run yet: the figures and the chart will say which model and inputs they "
                                  "measured.")
        self.control = JobControl(self.jobs, self.start, caption=self.caption, parent=self)
        self.control.stopped.connect(self._stopped)
        self.run_form = RunSettingsForm()
        self.run_form.layout().setVerticalSpacing(2)     # compact rows leave the plots room at 1024x700
        status = self.control.status
        # A fixed box: the text changes several times a second and must not re-lay out the tab.
        status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        # Two lines across the whole tab (below the form and the figures, not under the form alone).
        status.setFixedHeight(2 * status.fontMetrics().lineSpacing())
        left = QVBoxLayout()
        left.addWidget(self.run_form)
        left.addLayout(self.control.buttons)
        left.addWidget(self.control.progress)
        left.addStretch()
        stats_box = self._build_figures()
        top = QHBoxLayout()
        top.addLayout(left)
        top.addWidget(stats_box, 1)
        self.view = LatencyView()
        self.view.redrawn.connect(self._redrawn)
        self.caption.follow(stats_box, self.view)
        layout = QVBoxLayout(live)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.caption)
        layout.addLayout(top)
        layout.addWidget(status)
        layout.addWidget(self.view, 1)

    def _build_figures(self) -> QGroupBox:
        """The run's figures in two columns, a note on how exact they are, and one on guessed inputs."""
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
        return stats_box

    def remembered(self) -> dict:
        sweep = self.sweep
        return {**self.run_form.remembered(), "log_scale": self.view.log_scale,
                **sweep.run_form.remembered("sweep_"), "sweep_dim_values": sweep.dim_values,
                "sweep_concurrency_values": sweep.concurrency_values, "sweep_limit": sweep.limit,
                "sweep_percentile": sweep.percentile}

    def model_changed(self, model) -> None:
        if self.job is None:
            self.control.say("Open a model to benchmark it." if model is None else
                                f"Ready: {breakable(model.label)} with the Session tab's settings.")
        self.caption.model_changed(model)
        self.sweep.model_changed(model)

    # stored results ----------------------------------------------------------------
    def open_result(self, job, result: dict) -> None:
        """A stored sweep opens on the Sweep page; a benchmark's figures on the first."""
        if job is SWEEP:
            self.tabs.setCurrentWidget(self.sweep)
            self.sweep.show_result(result, note="re-opened from History")
        else:
            self.tabs.setCurrentIndex(0)
            self.show_report(result, note="re-opened from History")

    def run_again(self, job, entry: dict) -> None:
        from app.core.session.config import SessionConfig
        config, run = SessionConfig.from_dict(entry["session"]), RunSettings.from_dict(entry["run"])
        if job is SWEEP:
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
        self.caption.clear()
        self._show_guesses([])
        self.view.reset(run.concurrency)
        self.view.start()
        for value in self.values.values():
            value.setText("–")
        self.stats_note.setText("live figures are read from the histogram (within about 1 %); exact ones follow")
        self.control.run(f"Benchmark {label}", BENCH, BenchParams(path=path, session=config, run=run, variant=label),
                         self.show_result, subject=RunOf(path, label), on_data=self.receive,
                         message=f"Measuring {label}…")

    def receive(self, kind: str, payload) -> None:
        """What the running benchmark sends: batches of latencies, and the inputs it planned."""
        run = self.control.subject
        if kind == "latency":
            self.view.add_batch(payload["phase"], payload["ns"])
        elif kind == "inputs" and self.job is not None:
            self.planned = payload
            self.caption.show_run(run.path, run.label, payload["inputs"], run.started, note="measuring…")
            self._show_guesses(payload["inputs"])
            self.context.report_inputs(run.path, payload["inputs"])

    def _stopped(self, exc, run: RunOf) -> None:
        """Cancelled, a run keeps what it measured; cancelled before its first run, the result
        shown before comes back; stopped by an error, what it measured is marked so."""
        from app.core.jobs.errors import JobCancelled

        self.view.stop()
        nothing_run = not (self.view.series.count or self.view.series.warmup.size)
        if isinstance(exc, JobCancelled) and nothing_run and self._before and self._before[0]:
            self._show_before()
        elif isinstance(exc, JobCancelled):
            self._show_partial(run)
            self.control.note(f"cancelled after {self.view.series.count:,} runs")   # the dock says what the tab says
        elif self.planned is not None:
            self.caption.show_run(run.path, run.label, self.planned["inputs"], run.started, note="stopped by an error")

    def _show_before(self) -> None:
        """Cancelled before its first run (while the session was being made): the result that
        was on screen comes back, and the status says the new run measured nothing."""
        shown, series, figures, self.report = self._before
        self.view.restore(series, figures)
        self.show_report(*shown)
        self.control.say("Cancelled before the first run: nothing measured; the previous result is shown.")

    def _show_partial(self, run: RunOf) -> None:
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
        self.caption.show_run(run.path, run.label, (self.planned or {}).get("inputs", []), run.started, note=note)
        self.control.say(f"{run.label}: {note}; nothing stored.")

    def show_result(self, report: dict, run: RunOf) -> None:
        """A finished benchmark of `run`'s model: its exact figures, and where it was stored."""
        self.view.stop()
        self.report = report
        self.show_report(report, run.path, run.label)
        self.view.show_figures(report["latency_ms"])
        policy = report.get("session", {}).get("device_policy", "none")
        picked = f" (the device policy {policy} picked {devices_text(report.get('devices', []))})" if policy != "none" else ""
        self.control.say(f"Done: {report['iterations']:,} runs on {', '.join(report['providers'])}{picked}"
                            + stored_text(report))

    def show_report(self, report: dict, path: str | None = None, label: str = "", note: str = "") -> None:
        """The exact figures of a finished (or stored) benchmark, titled with what it ran on."""
        path = path or report["model"]["path"]
        self.shown = (report, path, label, note)
        self.caption.show_run(path, label or report.get("variant") or "", report.get("inputs"),
                              report.get("created"), note=note, load=report.get("load"), where="Benchmark",
                              timed=[Timed(path, report.get("inputs"), report.get("session"),
                                           report["latency_ms"]["p50"], "alone")])
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
