"""Session tab: every ONNX Runtime setting that matters for speed, the execution
providers in priority order, the inputs, presets, "Copy as Python", and node placement.

The widgets edit the window's SessionState (the context's `session`), which every model
job runs with; they are made and bound from the one table of session settings (app.core.session.fields)."""

from __future__ import annotations


from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QFileDialog, QFormLayout, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton,
                               QScrollArea, QTabWidget, QVBoxLayout, QWidget)

from app.gui.shell.job_control import JobControl, RunOf
from app.gui.shell.panel import Panel
from app.core.session.jobs import CAPABILITIES, PROBE_INPUTS, ModelSession, NoParams

#: the fields of the user's own data, on a row of their own (one row of all is wider than 1024 px)
DATA_FIELDS = ("inputs.data", "inputs.sample", "inputs.image_preset", "inputs.image_layout")
#: a decoder's step (app.core.session.decoder), on a row of its own
DECODER_FIELDS = ("inputs.phase", "inputs.past_length", "inputs.prompt_length")
PRESET_FILTER = "Session presets (*.json);;All files (*)"
#: where each box sits in the tab's grid: group -> (row, column, row span, column span)
PLACES = {"inputs": (0, 0, 1, 2), "providers": (1, 0, 1, 1), "graph": (1, 1, 1, 1), "advanced": (2, 0, 1, 1),
          "threads": (2, 1, 1, 1)}


class SessionPanel(Panel):
    title = "Session"

    # building ----------------------------------------------------------------
    def build(self) -> None:
        from app.gui.panels.session.fields import FIELDS, GROUPS, FormBinding
        from app.gui.panels.session.inputs_table import InputsTable
        from app.gui.panels.session.placement import PlacementView

        self.tabs = QTabWidget()
        self.layout_.addWidget(self.tabs)
        page = QWidget()
        grid = QGridLayout(page)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(page)
        self.tabs.addTab(scroll, "Settings")
        self.placement = PlacementView(self)
        self.tabs.addTab(self.placement, "Node placement")

        self.binding = binding = FormBinding(self.context.session)
        self.destroyed.connect(lambda *_: binding.close())
        self.widgets = self.binding.widgets
        self.providers = self.widgets["providers"]
        self.inputs_table = table = InputsTable(self.context.session)
        self.destroyed.connect(lambda *_: table.close_binding())
        forms: dict[str, QFormLayout] = {}
        for key, (title, tip) in GROUPS.items():
            box = QGroupBox(title)
            box.setToolTip(tip)
            if key == "inputs":
                self._build_inputs(box)
            else:
                forms[key] = QFormLayout(box)
            row, column, row_span, column_span = PLACES[key]
            grid.addWidget(box, row, column, row_span, column_span)
        for field in FIELDS:
            widget = self.widgets[field.name]
            if field.group == "inputs":      # values; the user's own data; a decoder's step: a row each
                row = (self.data_settings if field.name in DATA_FIELDS else
                       self.decoder_settings if field.name in DECODER_FIELDS else self.input_settings)
                row.addWidget(QLabel(field.label + ":"))
                row.addWidget(widget)
            elif field.widget in ("check", "providers"):
                forms[field.group].addRow(widget)
            else:
                forms[field.group].addRow(field.label + ":", widget)
        self.input_settings.addStretch()
        self.data_settings.addStretch()
        self.decoder_settings.addStretch()
        self.widgets["memory_limit"].setPlaceholderText(f"{self.context.settings.memory_limit} (the settings')")
        self.spin_note = QLabel("Checking which spin settings this ONNX Runtime has…")
        self.spin_note.setWordWrap(True)
        forms["threads"].addRow(self.spin_note)
        self._set_spin_support(None)

        buttons = QHBoxLayout()
        for text, slot in (("Load preset…", self.load_preset), ("Save preset…", self.save_preset),
                           ("Copy as Python", self.copy_python), ("Reset to defaults", self.reset)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        buttons.addStretch()
        self.message = QLabel()
        self.message.setTextFormat(Qt.TextFormat.PlainText)   # it shows names from files
        buttons.addWidget(self.message)
        grid.addLayout(buttons, 3, 0, 1, 2)
        grid.setRowStretch(4, 1)

        if self.context.providers_info:
            self.providers.set_availability(self.context.providers_info["providers"],
                                            self.context.providers_info.get("devices"))
        self.context.providers_ready.connect(
            lambda info: self.providers.set_availability(info["providers"], info.get("devices")))
        self.jobs.start("Check session settings", CAPABILITIES, NoParams(),
                        on_result=lambda info: self._set_spin_support(set(info["config_keys"])))
        self.context.inputs_planned.connect(self._planned)

    def _build_inputs(self, box: QGroupBox) -> None:
        layout = QVBoxLayout(box)
        self.input_settings = QHBoxLayout()
        layout.addLayout(self.input_settings)
        self.data_settings = QHBoxLayout()
        layout.addLayout(self.data_settings)
        self.decoder_settings = QHBoxLayout()
        layout.addLayout(self.decoder_settings)
        bar = QHBoxLayout()
        self.control = JobControl(self.jobs, self.find_inputs, "Find working inputs", parent=self)
        self.control.start_button.setToolTip("Plan the inputs with these settings and run the model once on them: "
                                             "fills the sizes that work and says where each input came from.")
        bar.addLayout(self.control.buttons)
        npz = QPushButton("All inputs from an .npz…")
        npz.clicked.connect(self._add_npz)
        clear = QPushButton("Forget my sizes and files")
        clear.setToolTip("Let the plan choose every size again (and generate every input)")
        clear.clicked.connect(lambda: self.context.session.set(
            **{"inputs.dims": {}, "inputs.shapes": {}, "inputs.files": {}}))
        for button in (npz, clear):
            bar.addWidget(button)
        self.control.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bar.addWidget(self.control.status, 1)
        layout.addLayout(bar)
        self.guess_note = QLabel()
        self.guess_note.setWordWrap(True)
        self.guess_note.setStyleSheet("color: #c0392b;")
        self.guess_note.hide()
        layout.addWidget(self.guess_note)
        layout.addWidget(self.inputs_table)
        legend = QLabel("<small>Sizes in <i>italics</i> are not set by you: the plan chooses them (shown: what it "
                        "chose or would choose). Grey sizes are fixed by the model.</small>")
        legend.setWordWrap(True)
        layout.addWidget(legend)

    def _set_spin_support(self, keys: set | None) -> None:
        """Spin time and back-off exist only in newer ORT builds."""
        for pool in ("intra", "inter"):
            for name, key in ((f"{pool}_op_spin_duration_us", f"session.{pool}_op.spin_duration_us"),
                              (f"{pool}_op_spin_backoff_max", f"session.{pool}_op.spin_backoff_max")):
                widget = self.widgets[name]
                supported = keys is not None and key in keys
                widget.setEnabled(supported)
                if keys is not None and not supported:
                    widget.setToolTip("This ONNX Runtime does not have this setting.")
        if keys is not None:
            self.spin_note.setVisible(False)

    # the model ---------------------------------------------------------------
    def model_changed(self, model) -> None:
        ready = model is not None and model.summary is not None
        self.inputs_table.set_inputs(model.summary["inputs"] if ready else [],
                                     model.summary.get("metadata") if ready else None)
        self.control.set_ready(ready)
        self.control.say("" if ready or model is None else f"{model.label}: reading…")
        plan = self.context.last_plan(model.path) if ready else None
        self._show_plan(plan or [])

    # the input plan ----------------------------------------------------------
    def _planned(self, path: str, rows: list) -> None:
        model = self.context.current_model()
        if model is not None and model.path == path:
            self._show_plan(rows)

    def _show_plan(self, rows: list[dict]) -> None:
        from app.gui.widgets.run_caption import GUESSED

        self.inputs_table.set_plan(rows)
        guessed = [row for row in rows if row.get("source") == "default"]
        self.guess_note.setText(f"⚠ {GUESSED}: " + "; ".join(f"{r['name']} ({r['reason']})" for r in guessed)
                                + " — set the sizes your model really gets in the table.")
        self.guess_note.setVisible(bool(guessed))

    def find_inputs(self) -> None:
        """Run PROBE_INPUTS on the current model with the current session, and fill the table."""
        model = self.context.current_model()
        if model is None or model.summary is None:
            self.context.show_error("Find working inputs", "Open a model first.")
            return
        config = self._try_config()
        if config is None:
            return
        self.control.run(f"Find working inputs for {model.label}", PROBE_INPUTS,
                         ModelSession(path=model.path, session=config),
                         lambda result, run: self._probed(run.path, result), subject=RunOf(model.path, model.label),
                         message=f"Trying inputs on {model.label}…")

    def _probed(self, path: str, result: dict) -> None:
        from app.gui.widgets.run_caption import inputs_text

        model = self.context.current_model()
        if model is None or model.path != path:
            self.context.report_inputs(path, result["inputs"])
            return
        if result["worked"]:
            self.inputs_table.fill(result["dims"], result["inputs"])
            self.control.say(f"These inputs run: {inputs_text(result['inputs'])}.")
        else:
            tried = result.get("tried") or [{}]
            reason = (tried[-1].get("error") or "the model did not run").splitlines()[0]
            self.control.say(f"No inputs worked: {reason}", failed=True)
        self.context.report_inputs(path, result["inputs"])

    # the config --------------------------------------------------------------
    def config(self):
        """The session setup every model job runs with (raises UserError on a bad entry)."""
        return self.context.session.config()

    def set_config(self, config) -> None:
        self.context.session.update(config)

    # actions -------------------------------------------------------------------
    def _try_config(self):
        return self.context.session_config("Session")

    def load_preset(self, path: str | None = None) -> None:
        from app.core.jobs.errors import UserError
        from app.core.session.config import SessionConfig

        if not path:
            path, _ = QFileDialog.getOpenFileName(self, "Load session preset", "", PRESET_FILTER)
        if not path:
            return
        try:
            self.set_config(SessionConfig.load(path))
        except UserError as exc:
            self.context.show_error("Load preset", exc.message)
            return
        self.message.setText(f"Loaded {path}")

    def save_preset(self, path: str | None = None) -> None:
        config = self._try_config()
        if config is None:
            return
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Save session preset", "session.json", PRESET_FILTER)
        if not path:
            return
        from app.core.jobs.errors import UserError
        try:
            config.save(path)
        except UserError as exc:
            self.context.show_error("Save preset", exc.message)
            return
        self.message.setText(f"Saved {path}")

    def python_snippet(self) -> str | None:
        from app.core.session.create import to_python

        config = self._try_config()
        if config is None:
            return None
        model = self.context.current_model()
        return to_python(config, model.path if model is not None else "model.onnx")

    def copy_python(self) -> None:
        from PySide6.QtGui import QGuiApplication

        snippet = self.python_snippet()
        if snippet is not None:
            QGuiApplication.clipboard().setText(snippet)
            self.message.setText("Python code copied to the clipboard")

    def reset(self) -> None:
        from app.core.session.config import SessionConfig
        self.set_config(SessionConfig())
        self.message.setText("Back to ONNX Runtime's defaults")

    def _add_npz(self, path: str | None = None) -> None:
        """One .npz holding an array per input, by name."""
        if not path:
            path, _ = QFileDialog.getOpenFileName(self, "Input data", "", "NumPy archives (*.npz)")
        if not path:
            return
        files = self.context.session.get("inputs.files")
        files["*"] = path
        self.context.session.set(**{"inputs.files": files, "inputs.mode": "files"})
