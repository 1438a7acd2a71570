"""Session tab: every ONNX Runtime setting that matters for speed, the execution
providers in priority order, the inputs, presets, "Copy as Python", and node placement.

The widgets edit the window's SessionState (the context's `session`), which every model
job runs with; they are made and bound from the one table in fields.py."""

from __future__ import annotations

from PySide6.QtWidgets import (QFileDialog, QFormLayout, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton,
                               QScrollArea, QTabWidget, QWidget)

from app.gui.shell.panel import Panel
from app.core.session.jobs import CAPABILITIES

PRESET_FILTER = "Session presets (*.json);;All files (*)"
#: where each box sits in the tab's grid: group -> (row, column, row span)
PLACES = {"providers": (0, 0, 1), "inputs": (1, 0, 1), "graph": (0, 1, 1), "threads": (1, 1, 2),
          "advanced": (2, 0, 1)}


class SessionPanel(Panel):
    title = "Session"

    # building ----------------------------------------------------------------
    def build(self) -> None:
        from app.gui.panels.session.fields import FIELDS, GROUPS, FormBinding
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
        forms: dict[str, QFormLayout] = {}
        for key, (title, tip) in GROUPS.items():
            box = QGroupBox(title)
            box.setToolTip(tip)
            forms[key] = QFormLayout(box)
            row, column, span = PLACES[key]
            grid.addWidget(box, row, column, span, 1)
        for field in FIELDS:
            widget = self.widgets[field.name]
            if field.kind in ("check", "providers"):
                forms[field.group].addRow(widget)
            else:
                forms[field.group].addRow(field.label, widget)
            if field.name == "inputs.files":
                add_file = QPushButton("Add file…")
                add_file.clicked.connect(self._add_file)
                forms[field.group].addRow("", add_file)
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
        buttons.addWidget(self.message)
        grid.addLayout(buttons, 3, 0, 1, 2)
        grid.setRowStretch(4, 1)

        if self.context.providers_info:
            self.providers.set_availability(self.context.providers_info["providers"])
        self.context.providers_ready.connect(lambda info: self.providers.set_availability(info["providers"]))
        self.jobs.start("Check session settings", CAPABILITIES, {},
                        on_result=lambda info: self._set_spin_support(set(info["config_keys"])))

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
        names = []
        if model is not None and model.summary is not None:
            for item in model.summary["inputs"]:
                names += [d for d in (item["shape"] or []) if isinstance(d, str) and d not in ("", "?")]
        self.widgets["inputs.dims"].set_names(list(dict.fromkeys(names)))
        self.binding.pull("inputs.dims")

    # the config --------------------------------------------------------------
    def config(self):
        """The session setup every model job runs with (raises UserError on a bad entry)."""
        return self.context.session.config()

    def set_config(self, config) -> None:
        self.context.session.update(config)

    # actions -------------------------------------------------------------------
    def _try_config(self):
        from app.core.jobs.errors import UserError
        try:
            return self.config()
        except UserError as exc:
            self.context.show_error("Session", exc.message)
            return None

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
        try:
            config.save(path)
        except OSError as exc:
            self.context.show_error("Save preset", f"{path}: cannot be written ({exc.strerror})")
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

    def _add_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Input data", "", "NumPy arrays (*.npy *.npz)")
        if not path:
            return
        model = self.context.current_model()
        names = [i["name"] for i in model.summary["inputs"]] if model is not None and model.summary else []
        key = "*" if path.endswith(".npz") or len(names) <= 1 else None
        if key is None:
            from PySide6.QtWidgets import QInputDialog
            key, ok = QInputDialog.getItem(self, "Input data", "Which input does this array feed?", names, 0, False)
            if not ok:
                return
        files = self.context.session.get("inputs.files")
        files[key] = path
        self.context.session.set(**{"inputs.files": files, "inputs.mode": "files"})
