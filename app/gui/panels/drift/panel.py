"""Drift tab: where a variant's values part from its source's, tensor by tensor in graph
order, with the first drifting tensor and the first non-finite one marked; and the repair:
keep the selected node in float32 (or out of int8) and convert again, or let the loop repeat
that until the outputs pass. Reached from a conversion's result, from Compare, or by
picking a variant in the model list."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QSplitter, QVBoxLayout, QWidget

from app.core.session.fidelity_policy import policy_text
from app.core.convert.jobs import SPEED_S, ConvertParams
from app.core.drift.jobs import DRIFT, REPAIR, DriftParams, RepairParams
from app.core.session.fidelity_policy import GivenTolerance
from app.gui.shell.handover import DriftPair
from app.gui.panels.drift.views import (STEP_HEADERS, STEP_KEYS, TENSOR_HEADERS, TENSOR_KEYS, first_text,
                                        number_table, repaired_story, step_row, tensor_row)
from app.gui.shell.job_control import JobControl
from app.gui.shell.panel import Panel
from app.gui.widgets.replace import confirm_replace

FIRST_DRIFT, FIRST_NONFINITE = QColor(240, 173, 78, 120), QColor(217, 83, 79, 120)
AUTO_STEPS = 8
AUTO_TIP = (f"Repeat: convert, find where the drift starts, keep that node; until the outputs pass or {AUTO_STEPS} "
            "conversions are made. Each step's accuracy and speed against the source are listed below.")
NOTHING_DRIFTED = ("Nothing to repair: every tensor is within the tolerance and none turned NaN or Inf, so the "
                   "variant passes as it is.")


#: the pairs whose drift (and repair) the tab keeps to show again when their variant is chosen again
SHOWN_PAIRS = 8


class DriftPanel(Panel):
    title = "Drift"

    def build(self) -> None:
        self.pair: DriftPair | None = None
        self.result: dict | None = None
        self.repair_result: dict | None = None
        self._shown: dict[tuple[str, str], tuple[dict, dict | None]] = {}    # (source, variant) -> what it showed
        self.heading = QLabel("Pick a variant in the model list, or press “Where does it drift?” on a conversion "
                              "or a comparison.")
        self.heading.setWordWrap(True)
        self.control = JobControl(self.jobs, lambda: self.start(), "Find the drift", parent=self)
        self.control.start_button.setToolTip("Run the source and the variant on the same inputs (the Session tab's) "
                                             "with every tensor exposed and compare them one by one.")
        self.control.ended.connect(self._refresh)
        top = QHBoxLayout()
        top.addLayout(self.control.buttons)
        top.addWidget(self.control.progress)
        top.addWidget(self.control.status, 1)
        self.inputs_label = QLabel()
        self.inputs_label.setTextFormat(Qt.TextFormat.PlainText)     # it shows input names from files
        self.inputs_label.setWordWrap(True)
        self.inputs_label.setToolTip("Both models run on the source's inputs from the Session tab's plan (change "
                                     "them there, with the source chosen), as a conversion's check does.")
        self.first_drift, self.first_nonfinite = QLabel(), QLabel()
        for label in (self.first_drift, self.first_nonfinite):
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setWordWrap(True)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter tensors, nodes, operators…")
        self.table = number_table(TENSOR_HEADERS)
        self.table.key_columns = TENSOR_KEYS
        self.filter.textChanged.connect(self.table.set_filter)
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._refresh())
        for widget in (self.heading, self.inputs_label, self.first_drift, self.first_nonfinite, self.filter):
            self.layout_.addWidget(widget)
        self.layout_.insertLayout(1, top)
        self.layout_.addWidget(self._build_repair(), 1)
        self.context.inputs_planned.connect(lambda path, _rows: self._show_inputs() if self._is_source(path) else None)
        state, listener = self.context.session, lambda _state, changed: self._inputs_changed(changed)
        state.subscribe(listener)
        self.destroyed.connect(lambda *_: state.unsubscribe(listener))
        self._refresh()

    def _build_repair(self) -> QSplitter:
        """The tensors' table over the repair: its buttons, its steps and how it ended."""
        self.keep_button = QPushButton("Keep the selected node in float32 and convert again")
        self.keep_button.setToolTip("Convert again with the selected tensor's node kept in float32 (float16) or "
                                    "left out of quantization (int8), then show its accuracy and speed.")
        self.keep_button.clicked.connect(self.keep_selected)
        self.auto_button = QPushButton("Repair automatically")
        self.auto_button.setToolTip(AUTO_TIP)
        self.auto_button.clicked.connect(lambda: self.repair())
        self.repair_note = QLabel()          # why the repair is off, where it is
        self.repair_note.setWordWrap(True)
        self.repair_note.setEnabled(False)   # read as a note: the muted text colour
        repair_row = QHBoxLayout()
        repair_row.addWidget(self.keep_button)
        repair_row.addWidget(self.auto_button)
        repair_row.addWidget(self.repair_note, 1)
        self.steps = number_table(STEP_HEADERS)
        self.steps.key_columns = STEP_KEYS
        self.outcome = QLabel()
        self.outcome.setWordWrap(True)
        lower = QWidget()
        column = QVBoxLayout(lower)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(repair_row)
        column.addWidget(self.steps, 1)
        column.addWidget(self.outcome)
        body = self.body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.table)
        body.addWidget(lower)
        body.setSizes([300, 240])
        return body

    # what is compared ------------------------------------------------------------
    def model_changed(self, model) -> None:
        if self.job is None and model is not None and model.parent is not None and model.kind != "source":
            self.show_pair(DriftPair(model.parent.path, model.path, (model.extra or {}).get("conversion")))
        self._refresh()

    def run_again(self, job, entry: DriftPair) -> None:
        """Find the drift of the pair `entry` now."""
        self.ensure_built()
        self.show_pair(entry)
        self.start()

    def show_pair(self, pair: DriftPair, keep_steps: bool = False) -> None:
        """Look into `pair`: what it showed before comes back; a new pair starts empty
        (`keep_steps`: a repair's steps stay)."""
        if self.pair is not None and (self.pair.source, self.pair.variant) == (pair.source, pair.variant):
            self.pair.conversion = pair.conversion or self.pair.conversion
            return
        self.pair, self.result = pair, None
        self.table.set_rows([])
        for label in (self.first_drift, self.first_nonfinite, self.control.status):
            label.setText("")
        if not keep_steps:
            self.repair_result = None
            self.steps.set_rows([])
            self.outcome.setText("")
        self.heading.setText(f"<b>{html.escape(Path(pair.variant).name)}</b> against its source "
                             f"<b>{html.escape(Path(pair.source).name)}"
                             "</b>")
        self._show_inputs()
        shown = self._shown.get((pair.source, pair.variant))
        if shown is not None and self.job is None and not keep_steps:    # back to a pair already looked into
            result, repair = shown
            if repair is not None:
                self.show_repair(repair)
            self.show_result(result)

    # the inputs both models run on --------------------------------------------------
    def _is_source(self, path: str) -> bool:
        return self.pair is not None and str(path) == str(self.pair.source)

    def _inputs_changed(self, changed) -> None:
        if any(name.startswith("inputs.") for name in changed):
            self._show_inputs()

    def _show_inputs(self) -> None:
        """The inputs of the result shown, else those the source's plan last chose, each with
        where its values come from; before any plan, the sizes the Session tab sets."""
        from app.gui.widgets.run_caption import inputs_text

        if self.pair is None:
            self.inputs_label.setText("")
            return
        ran = self.result is not None and not self.job
        rows = (self.result.get("inputs") if ran else None) or self.context.last_plan(self.pair.source)
        if rows:
            lead = "Ran on the source's inputs" if ran else "Runs on the source's inputs (as its plan last chose them)"
            self.inputs_label.setText(f"{lead}: {inputs_text(rows)}")
            return
        config = self.context.session.config_for(self.pair.source) if not self.context.session.problems() else None
        given = config.inputs.dims | {k: "×".join(map(str, v)) for k, v in config.inputs.shapes.items()} if config else {}
        self.inputs_label.setText("Runs on the source's inputs from the Session tab's plan"
                                  + (": " + ", ".join(f"{k} {v}" for k, v in given.items()) + " set there" if given
                                     else ", chosen when it runs (generated unless you give files or data)"))

    def _refresh(self) -> None:
        idle = self.job is None
        self.control.set_ready(self.pair is not None)
        repairable = idle and self.result is not None and self.result.get("remade_as") is not None
        passed = self.result is not None and self.result["first_drift"] is None \
            and self.result["first_nonfinite"] is None
        self.keep_button.setEnabled(repairable and self.table.currentIndex().isValid())
        self.auto_button.setEnabled(repairable and not passed)
        self.auto_button.setToolTip(NOTHING_DRIFTED if passed else AUTO_TIP)
        self.repair_note.setText(NOTHING_DRIFTED if passed else "")

    # finding the drift ---------------------------------------------------------
    def _session(self):
        """The Session tab's settings with the source's inputs: both models run on them."""
        return self.context.session_config("Drift", self.pair.source if self.pair else None)

    def _tolerance(self) -> GivenTolerance:
        """The tolerance the conversion was checked with (none known: the variant kind's)."""
        conversion = (self.pair.conversion if self.pair else None) or {}
        return GivenTolerance.from_dict((conversion.get("fidelity") or {}).get("tolerance") or {})

    def start(self) -> None:
        config = self._session()
        if self.pair is None or self.job is not None or config is None:
            return
        params = DriftParams(source=self.pair.source, variant=self.pair.variant, tolerance=self._tolerance(),
                             session=config)
        self.control.run(f"Drift of {Path(self.pair.variant).name}", DRIFT, params,
                         lambda result, _run: self.show_result(result),
                         message="Running both models with every tensor exposed…")
        self._refresh()

    def show_result(self, result: dict) -> None:
        """A pair's drift: every tensor compared, the first drifting and the first non-finite marked."""
        self.result = result
        self._keep_shown(self.pair, result, self.repair_result)
        for path in (result["source"], result["variant"]):       # the Graph tab's drift overlay draws it
            self.context.publish(DRIFT, path, result)
        self.context.report_inputs(result["source"], result.get("inputs") or [])
        self._show_inputs()
        self.table.set_rows([tensor_row(row) for row in result["tensors"]])
        marks = [(result["first_drift"], FIRST_DRIFT), (result["first_nonfinite"], FIRST_NONFINITE)]
        for first, colour in marks:
            if first is not None:
                for column in range(len(TENSOR_HEADERS)):
                    self.table.set_cell(first["index"], column, Qt.ItemDataRole.BackgroundRole, QBrush(colour))
        label, note = repaired_story(result, self.repair_result)
        self.first_drift.setText(first_text(label, result["first_drift"], FIRST_DRIFT))
        if self.repair_result is not None:
            self.outcome.setText(self._outcome_text(self.repair_result) + note)
        self.first_nonfinite.setText(first_text("First NaN/Inf", result["first_nonfinite"], FIRST_NONFINITE))
        first = result["first_drift"] or result["first_nonfinite"]
        if first is not None:
            shown = self.table.proxy.mapFromSource(self.table.source.index(first["index"], 0))
            self.table.selectRow(shown.row())
            self.table.scrollTo(shown, self.table.ScrollHint.PositionAtCenter)
        tolerance = result["tolerance"]
        self.control.say(f"{result['compared']} of {result['source_tensors']} tensors compared "
                            f"({result['variant_precision']} variant); outputs within {policy_text(tolerance)}, "
                            "tensors inside by cosine and the SQNR it implies")
        self._refresh()

    def _keep_shown(self, pair: DriftPair | None, result: dict, repair: dict | None) -> None:
        """Keep what a pair showed, to show it again when its variant is chosen again (choosing
        another variant, in the list or by Compare's selection, cleared a drift and its repair)."""
        if pair is None:
            return
        key = (pair.source, pair.variant)
        self._shown.pop(key, None)
        self._shown[key] = (result, repair)
        while len(self._shown) > SHOWN_PAIRS:
            self._shown.pop(next(iter(self._shown)))

    # repairing -----------------------------------------------------------------
    def selected_node(self) -> str | None:
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        row = self.table.proxy.mapToSource(index).row()
        return self.result["tensors"][row]["node"]

    def keep_selected(self) -> None:
        node = self.selected_node()
        if node:
            self.repair(keep=[node], steps=1)

    def repair_conversion(self, config) -> ConvertParams:
        """The conversion to run again: the one that made the variant, else as it looks made."""
        variant = Path(self.pair.variant)
        output = variant.with_name(f"{variant.stem}.repaired{variant.suffix}")    # never the variant itself
        conversion = self.pair.conversion
        if conversion is not None:
            return ConvertParams(kind=conversion["kind"], input=conversion["input"], output=str(output),
                                 force=output.exists(), options=conversion["options"], tolerance=self._tolerance(),
                                 session=config, speed_s=SPEED_S)
        remade = self.result["remade_as"]
        return ConvertParams(kind=remade["kind"], input=self.pair.source, output=str(output), force=output.exists(),
                             options=remade["options"], tolerance=self._tolerance(), session=config, speed_s=SPEED_S)

    def repair(self, keep: list[str] | None = None, steps: int = AUTO_STEPS) -> None:
        config = self._session()
        if self.result is None or self.job is not None or config is None:
            return
        conversion = self.repair_conversion(config)
        if conversion.force and not confirm_replace(self, Path(conversion.output), "the repaired variant"):
            return
        params = RepairParams(convert=conversion, keep=keep or [], max_steps=steps)
        self.steps.set_rows([])
        self._room_for_steps()
        self.control.run(f"Repair {Path(self.pair.variant).name}", REPAIR, params,
                         lambda report, _run: self._repaired(report), on_data=self._step_done,
                         message="Converting again…")
        self._refresh()

    def _step_done(self, kind: str, step) -> None:
        if kind == "repair-step":
            self.steps.set_rows([*self.steps.rows, step_row(step)])

    def _repaired(self, report: dict) -> None:
        self.context.open_model(report["output"], parent=self.context.model_at(report["input"]), kind=report["kind"],
                                extra={"conversion": report}, reread=True)
        self.show_pair(DriftPair(report["input"], report["output"], report),
                       keep_steps=True)
        # the first-drift lines were the unrepaired variant's: they wait for the repaired one's
        for label in (self.first_drift, self.first_nonfinite):
            label.setText("")
        self.show_repair(report)
        self.start()        # the table shows the repaired variant's drift

    def _room_for_steps(self) -> None:
        """Give the repair's steps most of the height while they are what the user waits for:
        on a 1024×700 screen the tensor table's share left room for one and a half rows."""
        total = sum(self.body.sizes())
        if total > 0 and self.body.sizes()[1] < 0.6 * total:
            self.body.setSizes([int(0.4 * total), total - int(0.4 * total)])

    def show_repair(self, report: dict) -> None:
        self.repair_result = report
        repair = report["repair"]
        self.steps.set_rows([step_row(step) for step in repair["steps"]])
        self._room_for_steps()
        self.outcome.setText(self._outcome_text(report))

    @staticmethod
    def _outcome_text(report: dict) -> str:
        repair = report["repair"]
        colour = "#2e8b3d" if repair["passed"] else "#c0392b"
        return (f"<b style='color:{colour}'>{'Passed' if repair['passed'] else 'Not passed'}</b> after "
                f"{len(repair['steps'])} step(s), {repair['seconds']:.0f} s — stopped because "
                f"{html.escape(repair['stopped'])}. Kept: {html.escape(', '.join(repair['kept']) or 'nothing')}.")
