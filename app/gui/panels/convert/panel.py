"""Convert tab: make a variant of the current model, as a background job, and show what it
did and how faithful it is. The variant joins the model list under its source, and the
source stays selected, so the next conversion starts from the source again. Variants go to
a folder of the user's (the last one used; first a per-user folder), never by default
beside the source, whose folder is often shared."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QScrollArea, QSplitter, QVBoxLayout, QWidget)
from PySide6.QtCore import Qt

from app.core.convert.options import KINDS, default_output, kind_info, unavailable_reason
from app.core.convert.jobs import CONVERT, DETECT_TRANSFORMER, SPEED_S, ConvertParams
from app.core.model.jobs import ModelPath
from app.core.jobs.errors import UserError
from app.core.session.fidelity_policy import GivenTolerance, for_kind
from app.core.store.paths import output_dir
from app.gui.panels.convert.options_form import OptionsForm, PathEdit
from app.gui.panels.convert.result_card import ResultCard, failed_check_text
from app.gui.shell.job_control import JobControl
from app.gui.shell.handover import DriftPair
from app.gui.shell.panel import Panel
from app.gui.widgets.replace import confirm_replace



class ConvertPanel(Panel):
    title = "Convert"

    def build(self) -> None:
        self.output_edited = False
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.layout_.addWidget(self.heading)
        self.control = JobControl(self.jobs, self.start, "Convert", parent=self)
        self.control.ended.connect(self._refresh_state)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(self._build_settings())
        body.addWidget(self._build_result())
        body.setSizes([500, 700])
        self.layout_.addWidget(body, 1)
        self.context.providers_ready.connect(lambda _info: self._update_availability())
        self._kind_changed()

    def _build_settings(self) -> QWidget:
        """The kind, its options, the output and the check (scrolled), Convert and its status under them."""
        self.kind_box = QComboBox()
        self.kind_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.kind_box.setMinimumContentsLength(24)
        for kind in KINDS.values():
            self.kind_box.addItem(f"{kind.name} — {kind.title}", kind.name)
        self.kind_box.currentIndexChanged.connect(self._kind_changed)
        self.kind_note = QLabel()
        self.kind_note.setWordWrap(True)
        self.options = OptionsForm()
        options_box = QGroupBox("Options")
        QVBoxLayout(options_box).addWidget(self.options)
        check_box = self._build_check()
        buttons = QHBoxLayout()
        buttons.addLayout(self.control.buttons)
        buttons.addWidget(self.control.progress)
        settings = QWidget()
        column = QVBoxLayout(settings)
        column.addWidget(QLabel("Kind:"))
        column.addWidget(self.kind_box)
        column.addWidget(self.kind_note)
        column.addWidget(options_box)
        column.addWidget(check_box)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(settings)
        scroll.setMinimumWidth(settings.minimumSizeHint().width() + scroll.verticalScrollBar().sizeHint().width() + 4)
        # Convert and its status under the options, not at their end: in view however long the form
        left = QWidget()
        left_column = QVBoxLayout(left)
        left_column.setContentsMargins(0, 0, 0, 0)
        left_column.addWidget(scroll, 1)
        left_column.addLayout(buttons)
        left_column.addWidget(self.control.status)
        return left

    def _build_check(self) -> QGroupBox:
        """Where the variant goes, and how it is checked against its source."""
        self.output = PathEdit(save=True, filter_text="Models (*.onnx *.ort)")
        self.output.edit.textEdited.connect(lambda _: setattr(self, "output_edited", True))
        self.fidelity = QCheckBox("Check fidelity against the source")
        self.fidelity.setChecked(True)
        self.fidelity.setToolTip("Run the source and the variant on the same inputs and compare every output.")
        self.speed = QCheckBox("Measure its speed against the source")
        self.speed.setChecked(True)
        self.speed.setToolTip(f"Time the source and the variant in alternation for about {SPEED_S:g} s, each in its "
                              "own process, with the Session tab's settings and the check's inputs.")
        self.atol, self.rtol, self.cosine = QLineEdit(), QLineEdit(), QLineEdit()
        self.atol.setToolTip("Absolute tolerance per element.")
        self.rtol.setToolTip("Relative tolerance per element (times the source's value).")
        self.cosine.setToolTip("The lowest cosine similarity between source and variant outputs that passes.")
        self.dims = QLineEdit()
        self.dims.setPlaceholderText("the Session tab's sizes")
        self.dims.setToolTip("Empty: the check and the speed check run on the Session tab's input plan, as every "
                             "tab does. Sizes typed here (e.g. batch=1, sequence=128) replace the Session tab's "
                             "for this conversion only, and its result says they are yours.")
        self.inputs = PathEdit(filter_text="Arrays (*.npz *.npy)")
        self.inputs.setToolTip("Your own inputs: an .npz with one array per input (or an .npy for a one-input "
                               "model). Empty: seeded random inputs.")
        tolerance = QHBoxLayout()
        for label, edit in (("abs", self.atol), ("rel", self.rtol), ("cosine ≥", self.cosine)):
            edit.setMinimumWidth(64)
            tolerance.addWidget(QLabel(label))
            tolerance.addWidget(edit, 1)
        check_box = QGroupBox("Output and fidelity")
        form = QFormLayout(check_box)
        form.addRow("Save as:", self.output)
        form.addRow(self.fidelity)
        form.addRow(self.speed)
        form.addRow("Tolerance:", tolerance)
        form.addRow("Dimensions:", self.dims)
        form.addRow("Inputs:", self.inputs)
        return check_box

    def _build_result(self) -> QWidget:
        """The last conversion's card, and the way to its drift."""
        self.card = ResultCard()
        self.drift_button = QPushButton("Where does it drift?")
        self.drift_button.setToolTip("Open the Drift tab on this variant: its tensors against the source's, one by "
                                     "one, the node where they part, and the repair.")
        self.drift_button.clicked.connect(self.show_drift)
        result = QWidget()
        result_column = QVBoxLayout(result)
        result_column.setContentsMargins(0, 0, 0, 0)
        result_column.addWidget(self.card, 1)
        result_column.addWidget(self.drift_button)
        return result

    # kinds and options -------------------------------------------------------
    def kind(self) -> str:
        return self.kind_box.currentData()

    def select_kind(self, kind: str) -> None:
        self.kind_box.setCurrentIndex(self.kind_box.findData(kind))

    def _update_availability(self) -> None:
        model = self.kind_box.model()
        for row in range(self.kind_box.count()):
            kind = self.kind_box.itemData(row)
            reason = unavailable_reason(kind, self.context.providers_info)
            item = model.item(row)
            item.setEnabled(not reason)
            item.setToolTip(reason or kind_info(kind).summary)
        self._refresh_state()

    def _kind_changed(self) -> None:
        info = kind_info(self.kind())
        self.kind_note.setText(info.summary)
        self.options.set_options(info.options)
        policy = for_kind(info.name, self.options.values())
        self.atol.setText(f"{policy.atol:g}")
        self.rtol.setText(f"{policy.rtol:g}")
        self.cosine.setText(f"{policy.min_cosine:g}")
        for edit in (self.atol, self.rtol, self.cosine):
            edit.setToolTip(f"Held to {policy.describe()}: {policy.question}.")
        self._suggest_output()
        self._say("")
        self._update_availability()
        if info.name == "transformers":
            self._detect_transformer_shape()

    def remembered(self) -> dict:
        return {"kind": self.kind_box, "fidelity": self.fidelity, "speed": self.speed}

    def output_folder(self) -> Path:
        return Path(self.context.settings.convert_output_dir or output_dir())

    def _suggest_output(self) -> None:
        """A name from the source and the kind in the output folder; a path the user typed keeps
        its folder and name, and only its ending follows the kind (.ort or .onnx)."""
        if self.model is None:
            return
        typed = Path(self.output.text().strip()).expanduser()
        if self.output_edited and self.output.text().strip():
            if typed.suffix.lower() in (".onnx", ".ort"):
                self.output.setText(str(typed.with_suffix(kind_info(self.kind()).suffix)))
            return
        self.output.setText(str(self.output_folder() / default_output(self.model.path, self.kind()).name))

    def _detect_transformer_shape(self) -> None:
        if self.model is None or self.model.summary is None or self.model.summary["format"] != "onnx":
            return
        model = self.model

        def detected(shape: dict) -> None:
            if self.model is model and self.kind() == "transformers":
                for name in ("num_heads", "hidden_size"):
                    if shape[name]:
                        self.options.set_value(name, shape[name])
                # The type stays "auto" (the conversion reads it the same way); the note says what that gives.
                self.kind_note.setText(f"{kind_info('transformers').summary} Model type auto reads this graph as "
                                       f"{shape['model_type']}: {shape['model_type_reason']}.")

        self.jobs.start(f"Detect the layout of {model.label}", DETECT_TRANSFORMER, ModelPath(path=model.path),
                        on_result=detected)

    def _refresh_state(self) -> None:
        reason = unavailable_reason(self.kind(), self.context.providers_info)
        ready = self.model is not None and self.model.summary is not None and self.model.summary["format"] == "onnx"
        self.control.set_ready(ready and not reason)
        if reason:
            self._say(reason)
        elif self.model is not None and self.model.summary is not None and not ready:
            self._say("ORT-format models cannot be converted; convert the .onnx model they came from.")

    def model_changed(self, model) -> None:
        self.output_edited = False
        if model is None:
            self.heading.setText("Open a model to convert it.")
        else:
            self.heading.setText(f"<b>Convert {html.escape(model.label)}</b>" + ("" if model.kind == "source"
                                                                     else f" ({model.kind} variant)"))
            self._suggest_output()
        self.show_conversion((model.extra or {}).get("conversion") if model is not None else None)
        if model is not None and self.kind() == "transformers":
            self._detect_transformer_shape()
        self._refresh_state()

    # running -------------------------------------------------------------------
    def params(self, force: bool = False) -> ConvertParams:
        config = self.context.session.config()
        feeds = config.inputs
        for part in self.dims.text().split(","):
            name, sep, value = part.partition("=")
            if sep and name.strip():
                feeds.dims[name.strip()] = int(value) if value.strip().isdigit() else value.strip()
        if self.inputs.text().strip():
            feeds.files = {"*": self.inputs.text().strip()}
            feeds.mode = "files"
        try:
            tolerance = GivenTolerance(atol=float(self.atol.text()), rtol=float(self.rtol.text()),
                                       min_cosine=float(self.cosine.text()))
        except ValueError:
            raise UserError("bad-option", "the fidelity tolerances must be numbers") from None
        return ConvertParams(kind=self.kind(), input=self.model.path, output=self.output.text().strip(),
                             force=force, options=self.options.values(), fidelity=self.fidelity.isChecked(),
                             tolerance=tolerance, session=config, speed_s=SPEED_S if self.speed.isChecked() else 0)

    def start(self) -> None:
        if self.model is None or self.job is not None:
            return
        target = Path(self.output.text().strip()).expanduser()
        if target.parent == output_dir():
            target.parent.mkdir(parents=True, exist_ok=True)    # the per-user default, made on first use
        force = False
        if target.exists():
            if not confirm_replace(self, target):
                return
            force = True
        try:
            params = self.params(force)
        except UserError as exc:
            self._say(f"failed: {exc.message}", failed=True)
            return
        source = self.model
        kind = self.kind()
        self.control.run(f"Convert {source.label} to {kind}", CONVERT, params,
                         lambda report, _run: self.add_variant(report, source), message="converting…")
        self._refresh_state()

    def add_variant(self, report: dict, source) -> None:
        """A conversion of `source` is done: its variant joins the model list under it (the source
        stays the current model), and its card and check are shown."""
        # reread: a file replaced on disk is read again
        self.context.open_model(report["output"], parent=source, kind=report["kind"], extra={"conversion": report},
                                reread=True, select=False)
        self.context.settings.convert_output_dir = str(Path(report["output"]).parent)
        self.output_edited = False         # the next name comes from the kind again, in this folder
        self.show_conversion(report)
        problem = failed_check_text(report["fidelity"])
        name = Path(report["output"]).name
        self._say(f"made {name}, but the check failed: {problem}" if problem else
                  f"done: {name} is under its source in the model list", failed=bool(problem))

    def show_conversion(self, report: dict | None) -> None:
        """A conversion's card (None: none), and the way to its drift where its check ran."""
        self.card.show_report(report)
        self.drift_button.setEnabled(report is not None and report.get("check") in ("passed", "failed"))

    def show_drift(self) -> None:
        report = self.card.report
        from app.core.drift.jobs import DRIFT
        self.context.run_again(DRIFT, DriftPair(report["input"], report["output"], report))

    def _say(self, text: str, failed: bool = False) -> None:
        self.control.say(text, failed)
