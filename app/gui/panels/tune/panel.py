"""Tune tab: race session settings against each other, with a live leaderboard, then
measure the race's best again, each alone in its own process, and offer one only if it
was faster there."""

from __future__ import annotations

from app.core.verdict import verdict_words
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout,
                               QPushButton, QSpinBox, QSplitter, QVBoxLayout, QWidget)

from app.core.formatting import duration_text, interval_text, ratio_text
from app.gui.shell.job_control import JobControl, RunOf
from app.gui.shell.panel import Panel
from app.gui.widgets.chart_base import BarChart
from app.gui.widgets.clipped import WrappedLabel
from app.gui.widgets.run_caption import Timed
from app.core.tune.confirm import trials_text
from app.core.tune.jobs import TUNE, TuneParams
from app.core.tune.space import SearchLimits

# the answer (each finalist measured alone against yours) before the race that chose it: at
# 1024 px the table has about 380 px, where the verdict last was past the edge (and a long first
# header was scrolled to "tting (what it changes in you")
HEADERS = ["Change to yours", "Verdict", "Alone ×", "Alone 95% low", "Alone 95% high", "Alone ms",
           "Status", "Race ms", "Race 95 % interval", "Blocks"]
CHART_ROWS = 12          # the leaderboard chart shows the best this many; the table has them all


class TunePanel(Panel):
    title = "Tune"

    def build(self) -> None:
        from app.gui.widgets.run_caption import RunCaption

        self.result = None
        self.pending = None
        self.caption = RunCaption("No tuning run yet.")
        self.control = JobControl(self.jobs, self.start, "Start tuning", "Stop",
                                  "Stop tuning: what the race measured stays in the table, but a setting that was "
                                  "not measured again alone is not offered.", caption=self.caption, parent=self)
        self.control.stopped.connect(lambda *_: self.summary.setText("No result from this run."))
        left = self._build_search()
        self._build_results(left)
        self.redraw = QTimer(self)
        self.redraw.setInterval(200)        # the leaderboard changes a few times a second at most
        self.redraw.timeout.connect(self._draw_pending)
        self.control.ended.connect(self._end_redraw)

    def _build_search(self) -> QWidget:
        """The search's settings, Start and Stop, the progress and the answer with its actions."""
        controls = QGroupBox("Search")
        form = QFormLayout(controls)
        self.budget_trials = QSpinBox(maximum=100000, value=0, specialValueText="no limit")
        self.budget_trials.setToolTip("Stop after this many trials (one trial = one measured block of runs).")
        self.budget_seconds = QSpinBox(maximum=86400, value=120, specialValueText="no limit", suffix=" s")
        self.budget_seconds.setToolTip("Stop after this long; the best found so far is kept.")
        self.max_threads = QSpinBox(maximum=512, value=0, specialValueText="all cores")
        self.max_threads.setToolTip("Never try more intra-op threads than this (e.g. to leave cores for other work).")
        self.strategy = QComboBox()
        self.strategy.addItem("Race (noise-aware, fast)", "race")
        self.strategy.addItem("Grid (every setting, slow)", "grid")
        self.strategy.setToolTip("The race drops clearly worse settings early and spends its time on close "
                                 "contenders; the grid measures everything equally (for comparison).")
        form.addRow("Budget (trials):", self.budget_trials)
        form.addRow("Budget (time):", self.budget_seconds)
        form.addRow("Threads at most:", self.max_threads)
        self.finalists = QSpinBox(minimum=1, maximum=8, value=2)
        self.finalists.setToolTip("How many of the race's best are measured again, each alone in its own process.")
        self.confirm_seconds = QDoubleSpinBox(minimum=0.1, maximum=600, value=2.0, decimals=1, suffix=" s")
        self.confirm_seconds.setToolTip("How long each finalist and your settings are measured again "
                                        "(at least 10 rounds).")
        form.addRow("Strategy:", self.strategy)
        form.addRow("Measure again:", self.finalists)
        form.addRow("Each for:", self.confirm_seconds)
        self.note = WrappedLabel("The session settings of the Session tab are the baseline; the providers listed "
                           "there are the ones tried. The race measures each setting right after a block of "
                           "the baseline, in one process, which only ranks them; its best are then measured "
                           "again, each alone in its own process as it will be deployed, and one is offered "
                           "only if it was faster there.")
        form.addRow(self.control.buttons)
        self.summary = WrappedLabel("Start tuning to race settings against yours.")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        actions = QHBoxLayout()
        self.apply_button = QPushButton("Apply to Session tab")
        self.apply_button.clicked.connect(self.apply_best)
        self.save_button = QPushButton("Save as preset…")
        self.save_button.clicked.connect(self.save_best)
        self.copy_button = QPushButton("Copy as Python")
        self.copy_button.clicked.connect(self.copy_best)
        for button in (self.apply_button, self.save_button, self.copy_button):
            button.setEnabled(False)
            actions.addWidget(button)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(controls)
        left_layout.addWidget(self.control.progress)
        left_layout.addWidget(self.control.status)
        left_layout.addWidget(self.summary)
        left_layout.addLayout(actions)
        left_layout.addWidget(self.note)        # below the result's buttons: on a small screen it scrolls, they do not
        left_layout.addStretch(1)
        return left

    def _build_results(self, left: QWidget) -> None:
        """The leaderboard as a table and a chart, under the caption that says whose it is."""
        from app.gui.widgets.table import DataTable

        self.table = DataTable(HEADERS)
        self.table.key_columns = ("Verdict", "Alone ×")       # a long setting's text gives up width first
        self.table.decimals = 3
        # the speedup as the summary writes it (×0.60, not 0.599), its interval to the same decimals
        self.table.column_formats = {"Alone ×": ratio_text, "Alone 95% low": "{:.2f}".format,
                                     "Alone 95% high": "{:.2f}".format}
        self.table.setToolTip("Race: in one process beside the other settings (ranks only). Alone: each in its "
                              "own process, speedup over your settings, in alternation, and its median.")
        self.chart = LeaderboardChart()
        # the caption above the splitter, not a pane of it: a pane keeps the height it was given,
        # so a caption that wraps to a second line had it cut off
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.chart)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.caption)
        right_layout.addWidget(split, 1)
        self.caption.follow(self.table, self.chart, self.summary)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(left)
        body.addWidget(right)
        body.setSizes([360, 800])
        self.layout_.addWidget(body)

    def remembered(self) -> dict:
        return {"strategy": self.strategy, "budget_trials": self.budget_trials, "budget_seconds": self.budget_seconds,
                "max_threads": self.max_threads, "finalists": self.finalists, "confirm_seconds": self.confirm_seconds}

    def model_changed(self, model) -> None:
        self.control.set_ready(model is not None and model.summary is not None)
        self.caption.model_changed(model)
        # another model's best settings are not applied, saved or copied for this one
        for button in (self.apply_button, self.save_button, self.copy_button):
            button.setEnabled(self.result is not None and self.caption.current)
        if self.job is None and self.result is None:
            self.summary.setText("Open a model to tune it." if model is None else
                                 f"Ready: Start tuning searches session settings for {model.label}.")

    def params(self) -> TuneParams:
        config = self.context.session.config()
        limits = SearchLimits(providers=config.provider_names(), max_threads=self.max_threads.value())
        return TuneParams(path=self.model.path, session=config, limits=limits,
                          strategy=self.strategy.currentData(), finalists=self.finalists.value(),
                          confirm_seconds=self.confirm_seconds.value(),
                          budget_trials=self.budget_trials.value() or None,
                          budget_seconds=self.budget_seconds.value() or None)

    def start(self) -> None:
        if self.model is None or self.job is not None:
            return
        self.result = None
        for button in (self.apply_button, self.save_button, self.copy_button):
            button.setEnabled(False)
        self.summary.setText("Measuring your settings, then racing the others…")
        self.caption.clear()
        self.redraw.start()
        self.control.run(f"Tune {self.model.label}", TUNE, self.params(), self.show_result,
                         subject=RunOf(self.model.path, self.model.label), on_data=self.receive)

    def receive(self, kind: str, payload) -> None:
        """What the running job sends as it goes (`kind`: what `payload` is)."""
        if kind == "leaderboard":
            self.pending = payload

    def _draw_pending(self) -> None:
        if self.pending is not None:
            self.show_board(self.pending["rows"], self.pending.get("default_ms"))
            self.pending = None

    def show_board(self, rows: list[dict], default_ms: float | None, best: str | None = None,
                   finished: bool = False) -> None:
        """The leaderboard; `best`: the label of the offered winner, shown in bold on green."""
        winner = next((r for r in rows if r["label"] == best), None)
        self.table.set_rows([[row["label"], verdict_words(row.get("verdict")), row.get("speedup"),
                              *(row.get("speedup_ci") or [None, None]), row.get("remeasured_ms"),
                              status_text(row, winner), row["latency_ms"], race_interval(row), row["blocks"]]
                             for row in rows])
        if winner is not None:
            self._highlight(rows.index(winner))
        self.chart.show_rows([r for r in rows if r["latency_ms"] is not None][:CHART_ROWS], default_ms, best, finished)

    def _highlight(self, index: int) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QBrush, QColor, QFont
        from app.gui.widgets.theme import plot_colors

        shade = QColor(plot_colors()["good"])
        shade.setAlpha(60)
        font = QFont(self.table.font())
        font.setBold(True)
        for column in range(self.table.source.columnCount()):
            self.table.set_cell(index, column, Qt.ItemDataRole.FontRole, font)
            self.table.set_cell(index, column, Qt.ItemDataRole.BackgroundRole, QBrush(shade))

    def _end_redraw(self) -> None:
        """The job is over: what the race measured last stays in the table."""
        self.redraw.stop()
        self._draw_pending()

    def show_result(self, result: dict, run: RunOf) -> None:
        """A finished search of `run`'s model: the leaderboard, the answer, and its actions."""
        self.redraw.stop()
        self.pending = None             # the race's last board: the finished one replaces it
        self.result = result
        self.context.report_inputs(run.path, result.get("inputs") or [])
        default = result["default"]
        self.caption.show_run(run.path, run.label, result.get("inputs"), run.started,
                              note="stopped early" if result["cancelled"] else "", where="Tune",
                              timed=[Timed(run.path, result.get("inputs"), default.get("session"),
                                           default.get("latency_ms"), "your settings, in alternation")])
        best, default = result["best"], result["default"]
        winner = best["label"] if result["clearly_faster"] else None
        self.show_board(result["trials"], default["race_latency_ms"], winner, finished=True)
        searched = (f"{trials_text(result)} in "
                    f"{result['seconds']:.0f} s. {result.get('stop_reason', '')}")
        if result["clearly_faster"]:
            headline = (f"<b>Best: {best['label']}</b> — {ratio_text(result['speedup'])} "
                        f"(95 % interval {interval_text(result['speedup_ci'])}, {verdict_words(result['verdict'])}) over your settings, "
                        f"each alone in its own process: {duration_text(best['latency_ms'], 4)} vs "
                        f"{duration_text(default['latency_ms'], 4)}.<br>")
        else:
            headline = f"<b>Nothing beat your settings.</b> {result['note']}<br>"
        self.summary.setText(headline + searched)
        for button in (self.apply_button, self.save_button, self.copy_button):
            button.setEnabled(True)

    def best_config(self):
        from app.core.session.config import SessionConfig
        return SessionConfig.from_dict(self.result["best"]["session"])

    def apply_best(self) -> None:
        self.context.session.update(self.best_config())
        self.context.show_status("The best setting is now in the Session tab.", 5000)

    def save_best(self, path: str | None = None) -> None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Save session preset", "tuned.json", "Presets (*.json)")
        if not path:
            return
        from app.core.jobs.errors import UserError
        try:
            self.best_config().save(path)
        except UserError as exc:
            self.context.show_error("Save preset", exc.message)

    def copy_best(self) -> None:
        from PySide6.QtGui import QGuiApplication
        from app.core.session.create import to_python
        QGuiApplication.clipboard().setText(to_python(self.best_config(), self.model.path if self.model else "model.onnx"))


def race_interval(row: dict) -> str:
    """The race's 95 % interval of a setting's latency (ms), or why it has none: one block
    gives no interval (most settings the race dropped in its first round have one)."""
    if row.get("ci_ms"):
        low, high = row["ci_ms"]
        return f"{low:.3f}–{high:.3f}"
    if row.get("error"):
        return "— (failed)"
    return f"— ({row['blocks']} block{'s' if row['blocks'] != 1 else ''}: no interval)"


def status_text(row: dict, winner: dict | None) -> str:
    """Where a setting stands, and why it was dropped; a dropped one whose race figure reads
    faster than the winner's says why that figure is not the verdict."""
    if winner is row:
        return "best"
    if row["alive"]:
        return "finalist" if row.get("remeasured") else "racing"
    if row.get("error"):
        return f"failed: {row['error']}"
    text = f"dropped in round {row['eliminated_in_round'] + 1}"
    if row.get("dropped_because"):
        text += f": {row['dropped_because']}"
    if winner is not None and row["latency_ms"] is not None and row["latency_ms"] < winner["latency_ms"]:
        text += (f" (its race figure rests on {row['blocks']} block(s); the best was measured more, "
                 "and again alone)")
    return text


def distinct_labels(labels: list[str]) -> list[str]:
    """Each setting's label less the changes every one of them makes: cut to the chart's width,
    "2 threads, spinning off, 1 inter-op thread" and two others read the same "2 threads,…-op
    thread", the part that told them apart cut away."""
    parts = [label.split(", ") for label in labels]
    shared = set(parts[0]).intersection(*parts[1:]) if len(parts) > 1 else set()
    return [", ".join(part for part in own if part not in shared) or label for own, label in zip(parts, labels)]


class LeaderboardChart(BarChart):
    """Each contender's race latency with its 95 % interval, your settings as a dashed line,
    the winner in green and the dropped in grey."""

    def __init__(self):
        super().__init__("Race latency (whiskers: 95 % interval; dashed: your settings)", durations=True,
                         show_values=False, placeholder="No setting measured yet: start tuning.")
        pg = self._pg
        self.category_axis.label_width = 240
        self.errors = None
        self.baseline = pg.InfiniteLine(angle=90, pen=pg.mkPen(self.colors["second"], width=2,
                                                               style=Qt.PenStyle.DashLine))
        self.baseline.setVisible(False)        # until the baseline has been measured
        self.plot.addItem(self.baseline)

    def show_rows(self, rows: list[dict], default_ms: float | None, best: str | None = None,
                  finished: bool = False) -> None:
        """`finished`: the race is over, so only the offered winner stands out (a finalist left
        in the race's colour read as the answer beside "nothing beat your settings")."""
        import numpy as np

        pg = self._pg
        colors = [self.colors["good"] if r["label"] == best else self.colors["accent"] if r["alive"] and not finished
                  else self.colors["muted"] for r in rows]
        self.set_bars(distinct_labels([r["label"] for r in rows]), [r["latency_ms"] for r in rows], "race_latency_ms",
                      brushes=colors)
        if self.errors is not None:
            self.plot.removeItem(self.errors)
            self.errors = None
        if not rows:
            return
        x = np.array(self.values, dtype=float)
        low = np.array([(r["ci_ms"] or [v, v])[0] for r, v in zip(rows, x)], dtype=float)
        high = np.array([(r["ci_ms"] or [v, v])[1] for r, v in zip(rows, x)], dtype=float)
        self.errors = pg.ErrorBarItem(x=x, y=np.arange(len(rows), dtype=float), left=np.clip(x - low, 0, None),
                                      right=np.clip(high - x, 0, None), beam=0.2, pen=self.colors["foreground"])
        self.plot.addItem(self.errors)
        shown = default_ms is not None and bool(np.isfinite(default_ms))
        if shown:
            self.baseline.setValue(default_ms)
        self.baseline.setVisible(shown)
        self.fit(high=max(float(high.max()), default_ms if shown else 0.0))
