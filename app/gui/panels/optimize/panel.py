"""Optimize tab: pick the goal, the kinds and the budget; the leaderboard fills as each
candidate is made, checked and timed against the source; the answer, and the folder the job
wrote to ship (model, preset.json, session.py, report.html, optimize.json)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QLabel, QLineEdit,
                               QListWidget, QListWidgetItem, QPushButton, QScrollArea, QSpinBox,
                               QSplitter, QVBoxLayout, QWidget)

from app.core.verdict import verdict_words
from app.core.optimize.candidates import ALL_KINDS, kind_title
from app.core.optimize.jobs import OPTIMIZE
from app.core.optimize.params import OptimizeParams
from app.core.optimize.report import where_text
from app.core.optimize.rows import answer_text, judged_text, tune_text
from app.core.formatting import ratio_text
from app.gui.shell.job_control import JobControl, RunOf
from app.gui.shell.panel import Panel
from app.gui.widgets.run_caption import RunCaption, Timed

# the verdict beside its speedup: at 1024 px the board has about 370 px, where it came sixth, past the edge
HEADERS = ["Candidate", "Status", "Speedup ×", "Verdict", "95% low", "95% high", "Median ms", "Size (bytes)", "Why"]


def board_row(row: dict) -> list:
    interval = row.get("speedup_ci") or [None, None]
    return [row["kind"], row["status"], row.get("speedup"), verdict_words(row.get("verdict")), interval[0], interval[1],
            row.get("latency_ms"), row.get("size_bytes"), row["reason"]]


class OptimizePanel(Panel):
    title = "Optimize"

    def build(self) -> None:
        self.result = None
        self.rows: list[dict] = []
        # whose search this is: greyed, with its model's name, once another model is chosen
        self.caption = RunCaption("No search yet: its leaderboard and answer will say which model they are for.")
        self.control = JobControl(self.jobs, self.start, caption=self.caption, parent=self)
        self.control.stopped.connect(lambda *_: self.answer.setText("The search stopped before its answer."))
        left = self._build_search()
        board = self._build_board()
        from app.gui.panels.optimize.plot import SpeedFidelityChart
        self.chart = SpeedFidelityChart()
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(board)
        split.addWidget(self.chart)
        split.setSizes([400, 300])
        self.caption.follow(split, self.answer, self.ship_button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.caption)
        right_layout.addWidget(split, 1)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(left)
        body.addWidget(right)
        body.setSizes([360, 800])
        self.layout_.addWidget(body)

    def _build_form(self) -> QGroupBox:
        """The search's settings: goal, kinds, budget, where to ship."""
        controls = QGroupBox("Search")
        form = QFormLayout(controls)
        self.objective = QComboBox()
        self.objective.addItem("Lowest latency", "latency")
        self.objective.addItem("Highest throughput (one stream)", "throughput")
        self.latency_limit = QDoubleSpinBox(maximum=1e6, decimals=3, value=0, suffix=" ms", specialValueText="none")
        self.latency_limit.setToolTip("Only a candidate whose median latency is at most this is chosen.")
        self.kinds = QListWidget()
        for kind in ALL_KINDS:         # the conversions, then the source on another execution provider
            title, summary = kind_title(kind)
            item = QListWidgetItem(title)
            item.setData(Qt.ItemDataRole.UserRole, kind)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            item.setToolTip(summary)
            self.kinds.addItem(item)
        # every kind in sight (the form scrolls in a small window): at 1024×700 four of eight showed
        self.kinds.setFixedHeight(len(ALL_KINDS) * self.kinds.sizeHintForRow(0) + 2 * self.kinds.frameWidth() + 2)
        self.budget = QSpinBox(minimum=5, maximum=86400, value=300, suffix=" s")
        self.budget.setToolTip("The whole search's time: no new work starts once it is spent.")
        self.screen_seconds = QDoubleSpinBox(minimum=0.05, maximum=60, value=2.0, decimals=2, suffix=" s")
        self.screen_seconds.setToolTip("How long each candidate and the source are timed, in alternation, at most.")
        self.tune = QCheckBox("Tune the best candidate's session")
        self.tune.setChecked(True)
        self.try_slower = QCheckBox("Also try kinds expected to be slower here")
        self.try_slower.setToolTip("int8 without VNNI or dot-product instructions, float16 on the CPU provider: "
                                   "skipped by default, with the reason; checked, they are made and measured too.")
        self.folder = QLineEdit()
        self.folder.setToolTip("The folder to ship: the chosen model, preset.json, session.py, report.html and "
                               "optimize.json are written there.")
        self.force = QCheckBox("Replace the files already in the folder")
        self.keep = QCheckBox("Keep every candidate (to open in Compare, Drift, Graph)")
        self.keep.setChecked(True)
        self.keep.setToolTip("Every candidate made is also written into the folder's candidates/.")
        form.addRow("Goal:", self.objective)
        form.addRow("Latency limit:", self.latency_limit)
        form.addRow("Kinds to try:", self.kinds)
        form.addRow("Budget:", self.budget)
        form.addRow("Time each for:", self.screen_seconds)
        form.addRow(self.tune)
        form.addRow(self.try_slower)
        form.addRow("Ship into:", self.folder)
        form.addRow(self.force)
        form.addRow(self.keep)
        return controls

    def _build_search(self) -> QWidget:
        """The form (scrolled in a small window), Start and Cancel, the progress and the answer."""
        controls = self._build_form()
        self.answer = QLabel("Open a model, then Start: every conversion that can help is made, checked and timed "
                             "against the source, within the budget.")
        self.answer.setTextFormat(Qt.TextFormat.PlainText)    # it holds names from the model
        self.answer.setWordWrap(True)
        self.answer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.ship_button = QPushButton("Ship this: show the folder")
        self.ship_button.setToolTip("The search already wrote the chosen model and its settings there; this "
                                    "opens the folder.")
        self.ship_button.setEnabled(False)
        self.ship_button.clicked.connect(self.show_folder)
        holder = QWidget()             # the controls keep their height in a tall window
        holder_layout = QVBoxLayout(holder)
        holder_layout.setContentsMargins(0, 0, 0, 0)
        holder_layout.addWidget(controls)
        holder_layout.addStretch(1)
        scroll = QScrollArea()         # a small window scrolls the controls; the answer stays in sight
        scroll.setWidget(holder)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setMinimumWidth(controls.sizeHint().width() + scroll.verticalScrollBar().sizeHint().width())
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(scroll, 1)
        # under the scrolled form: a long answer must not push Start out of sight; what the search is
        # doing is wrapped under the bar (inside it the text was cut at 1024 px)
        left_layout.addLayout(self.control.buttons)
        for widget in (self.control.progress, self.control.status, self.answer, self.ship_button):
            left_layout.addWidget(widget)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        return left

    def _build_board(self) -> QWidget:
        """The leaderboard, the selected candidate's actions and why it won or lost."""
        from app.gui.widgets.table import DataTable
        self.table = DataTable(HEADERS)
        self.table.key_columns = ("Verdict",)
        self.table.decimals = 3
        self.table.column_formats = {"Speedup ×": ratio_text, "95% low": "{:.2f}".format, "95% high": "{:.2f}".format}
        from app.gui.panels.optimize.candidates import CandidateActions
        board = QWidget()
        board_layout = QVBoxLayout(board)
        board_layout.setContentsMargins(0, 0, 0, 0)
        board_layout.addWidget(self.table)
        self.actions = CandidateActions(self)
        self.table.selectionModel().currentChanged.connect(self.actions.refresh)
        board_layout.addWidget(self.actions)
        self.why = QLabel("Pick a candidate to read in full why it won or lost.")
        self.why.setTextFormat(Qt.TextFormat.PlainText)
        self.why.setWordWrap(True)
        self.why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table.selectionModel().currentChanged.connect(self._show_why)
        board_layout.addWidget(self.why)
        return board

    def remembered(self) -> dict:
        return {"objective": self.objective, "budget": self.budget, "screen_seconds": self.screen_seconds,
                "tune": self.tune, "keep": self.keep}

    def model_changed(self, model) -> None:
        ready = model is not None and model.summary is not None
        self.control.set_ready(ready)
        self.caption.model_changed(model)
        if model is not None and self.job is None:
            from app.core.store.paths import output_dir
            self.folder.setText(str(output_dir() / f"{Path(model.path).stem}-optimized"))

    def chosen_kinds(self) -> list[str]:
        items = [self.kinds.item(i) for i in range(self.kinds.count())]
        return [i.data(Qt.ItemDataRole.UserRole) for i in items if i.checkState() == Qt.CheckState.Checked]

    def params(self) -> OptimizeParams:
        return OptimizeParams(model=self.model.path, out_dir=self.folder.text().strip(), kinds=self.chosen_kinds(),
                              objective=self.objective.currentData(),
                              latency_limit_ms=self.latency_limit.value() or None,
                              budget_seconds=float(self.budget.value()), screen_seconds=self.screen_seconds.value(),
                              tune=self.tune.isChecked(), force=self.force.isChecked(),
                              keep_candidates=self.keep.isChecked(), try_expected_slower=self.try_slower.isChecked(),
                              session=self.context.session.config())

    def start(self) -> None:
        if self.model is None or self.job is not None:
            return
        params = self.params()
        self.result, self.rows = None, []
        self.table.set_rows([])
        self.chart.set_rows([])
        self.ship_button.setEnabled(False)
        self.answer.setText("Searching…")
        self.control.run(f"Optimize {self.model.label}", OPTIMIZE, params, lambda result, _run: self.show_result(result),
                         subject=RunOf(self.model.path, f"the candidates of {self.model.label}"), on_data=self.receive)

    def receive(self, kind: str, payload) -> None:
        """What the running job sends as it goes (`kind`: what `payload` is)."""
        if kind == "candidate":
            self.rows.append(payload)
            self.table.set_rows([board_row(r) for r in self.rows])
            self.chart.set_rows(self.rows)

    def open_result(self, job, result: dict) -> None:
        """A stored search (from History): its leaderboard and answer, as when it finished."""
        if self.job is None:
            self.show_result(result, caption="Re-opened from History.")

    def show_result(self, result: dict, caption: str = "") -> None:
        self.result = result
        # current while its source, the shipped model or a kept candidate is the current model
        made = [result["choice"]["model"]] + [row["model"] for row in result["candidates"] if row.get("model")]
        source = result["candidates"][0] if result["candidates"] else {}
        self.caption.show_run(result["model"], Path(result["model"]).name, result.get("inputs"),
                              when=result.get("created"), note=caption, paths=[result["model"], *made],
                              where="Optimize",
                              timed=[Timed(result["model"], result.get("inputs"), result.get("session"),
                                           source.get("latency_ms"), "the source beside a candidate")]
                              if source.get("kind") == "source" else [])
        self.table.set_rows([board_row(r) for r in result["candidates"]])
        self.chart.set_rows(result["candidates"])
        self.answer.setText(f"Answer: {answer_text(result['choice'])}."
                            f"{' Cancelled: what was measured so far.' if result['partial'] else ''}\n"
                            f"Tuning: {tune_text(result['tune'])}\n"
                            f"{judged_text(result['data'])}.\n"
                            f"Made and measured on: {where_text(result)}.\n"
                            f"Written to {result['out_dir']}.{' ' + caption if caption else ''}")
        self.ship_button.setEnabled(Path(result["out_dir"]).is_dir())
        self.actions.refresh()

    def _show_why(self, *_) -> None:
        index = self.table.current_row()
        rows = self.result["candidates"] if self.result is not None else self.rows
        if index is not None and 0 <= index < len(rows):
            self.why.setText(f"{rows[index]['kind']}: {rows[index]['reason']}")

    def show_folder(self) -> None:
        from PySide6.QtGui import QDesktopServices
        if self.result is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(self.result["out_dir"]))
