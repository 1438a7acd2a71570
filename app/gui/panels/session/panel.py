"""Session tab: every ONNX Runtime setting that matters for speed, the execution
providers in priority order, the inputs, presets, "Copy as Python", and node placement.

`config()` is what every model job of the window runs with (MainWindow.session_config)."""

from __future__ import annotations

from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFormLayout, QGridLayout, QGroupBox, QHBoxLayout,
                               QLabel, QLineEdit, QPushButton, QScrollArea, QSpinBox, QTabWidget, QVBoxLayout, QWidget)

from app.gui.shell.panel import Panel
from app.core.session.jobs import CAPABILITIES

PRESET_FILTER = "Session presets (*.json);;All files (*)"
TIPS = {
    "opt": "How much ONNX Runtime rewrites the graph before running it. Basic folds constants and drops "
           "redundant nodes; extended adds fusions specific to ONNX Runtime's kernels; all also changes memory "
           "layouts for the CPU. More optimisation usually means faster runs and a slower start.",
    "mode": "Sequential runs one node at a time (each node may still use many threads). Parallel also runs "
            "independent branches at the same time; it helps only graphs with wide, independent branches.",
    "intra": "Threads that split the work inside one node (a big MatMul or Conv). 0 lets ONNX Runtime use one "
             "per physical core.",
    "inter": "Threads that run independent nodes at once; used only in parallel execution mode.",
    "affinity": "Pin the intra-op threads to cores: one group per thread except the first, separated by ';' "
                "(e.g. '1;2' or '3,4;5,6'). Usually best left empty; useful to keep sessions off each other's cores.",
    "spin": "Idle threads can keep polling for work (spinning) instead of sleeping: lower latency between "
            "nodes, more CPU burnt. Turning it off helps when other work shares the machine.",
    "spin_us": "How long an idle thread spins before it sleeps, in µs.",
    "backoff": "Spin more gently: each spin step doubles its pause up to this power of two, for less power "
               "use over the same spin time.",
    "block": "Hand out work in shrinking pieces so threads finish together; lowers latency variance on busy "
             "machines (4 is a good start). 0 keeps the fixed split.",
    "mem_pattern": "Plan the memory of all intermediate tensors once, from the first run, and reuse the plan. "
                   "Helps when input shapes stay the same.",
    "arena": "Keep freed CPU memory in a pool for the next allocation instead of returning it to the system: "
             "faster, but the process keeps the memory it once needed.",
    "deterministic": "Prefer kernels that give bit-identical results run after run (some are slower).",
    "log": "How much ONNX Runtime writes to its log; verbose shows every node's provider.",
    "free_dims": "Fix a symbolic dimension to a number inside ONNX Runtime, so it can plan and optimise for "
                 "that exact shape. One NAME=VALUE a line.",
    "entries": "Any other session setting ONNX Runtime knows, as KEY=VALUE lines "
               "(e.g. session.disable_prepacking=1).",
    "io_binding": "Bind inputs and outputs to buffers on the provider's device so runs skip the copies and "
                  "allocations of plain run() calls.",
    "inputs": "Seeded random values of the right type (integer inputs below the vocabulary size, masks all "
              "ones), zeros, or your own .npy/.npz files.",
}


def _tip(widget, key: str):
    widget.setToolTip(TIPS[key])
    return widget


def _default_spin(minimum: int, maximum: int, default_text: str) -> QSpinBox:
    """A spin box whose lowest value means 'leave it to ONNX Runtime'."""
    spin = QSpinBox()
    spin.setRange(minimum, maximum)
    spin.setSpecialValueText(default_text)
    return spin


class SessionPanel(Panel):
    title = "Session"

    def __init__(self, window):
        super().__init__(window)
        self._pending = None          # a config set before the widgets exist
        self._dim_names: list[str] = []
        self._shapes: dict[str, list[int]] = {}   # whole shapes from a preset (no widget of their own)

    # building ----------------------------------------------------------------
    def build(self) -> None:
        from app.gui.panels.session.placement import PlacementView
        from app.gui.panels.session.forms import DimsTable, KeyValueEdit, ProviderEditor

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

        providers_box = QGroupBox("Execution providers (in priority order)")
        self.providers = ProviderEditor()
        QVBoxLayout(providers_box).addWidget(self.providers)

        graph_box = QGroupBox("Graph and memory")
        form = QFormLayout(graph_box)
        self.opt_level = _tip(QComboBox(), "opt")
        self.opt_level.addItems(["disable", "basic", "extended", "all"])
        self.mode = _tip(QComboBox(), "mode")
        self.mode.addItems(["sequential", "parallel"])
        self.mem_pattern = _tip(QCheckBox("Memory pattern"), "mem_pattern")
        self.cpu_arena = _tip(QCheckBox("CPU memory arena"), "arena")
        self.deterministic = _tip(QCheckBox("Deterministic compute"), "deterministic")
        self.io_binding = _tip(QCheckBox("IO binding (inputs and outputs on the device)"), "io_binding")
        self.log_level = _tip(QComboBox(), "log")
        self.log_level.addItems(["verbose", "info", "warning", "error", "fatal"])
        form.addRow("Optimisation level:", self.opt_level)
        form.addRow("Execution mode:", self.mode)
        for box in (self.mem_pattern, self.cpu_arena, self.deterministic, self.io_binding):
            form.addRow(box)
        form.addRow("Log severity:", self.log_level)

        threads_box = QGroupBox("Threads")
        form = QFormLayout(threads_box)
        self.intra = _tip(_default_spin(0, 1024, "ORT default"), "intra")
        self.inter = _tip(_default_spin(0, 1024, "ORT default"), "inter")
        self.affinity = _tip(QLineEdit(), "affinity")
        self.affinity.setPlaceholderText("e.g. 1;2")
        self.spinning = {}
        self.spin_us = {}
        self.backoff = {}
        for pool in ("intra", "inter"):
            combo = _tip(QComboBox(), "spin")
            combo.addItems(["ORT default (spin)", "spin", "do not spin"])
            self.spinning[pool] = combo
            self.spin_us[pool] = _tip(_default_spin(-1, 10_000_000, "ORT default"), "spin_us")
            self.backoff[pool] = _tip(_default_spin(0, 1024, "ORT default"), "backoff")
        self.block_base = _tip(_default_spin(0, 64, "off"), "block")
        form.addRow("Intra-op threads:", self.intra)
        form.addRow("Inter-op threads:", self.inter)
        form.addRow("Intra-op affinities:", self.affinity)
        for pool, name in (("intra", "Intra-op"), ("inter", "Inter-op")):
            form.addRow(f"{name} spinning:", self.spinning[pool])
            form.addRow(f"{name} spin time (µs):", self.spin_us[pool])
            form.addRow(f"{name} spin back-off:", self.backoff[pool])
        form.addRow("Dynamic block base:", self.block_base)
        self.spin_note = QLabel("Checking which spin settings this ONNX Runtime has…")
        self.spin_note.setWordWrap(True)
        form.addRow(self.spin_note)
        self._set_spin_support(None)

        advanced_box = QGroupBox("Free dimensions and other settings")
        form = QFormLayout(advanced_box)
        self.free_dims = _tip(KeyValueEdit("batch=1", "free dimension overrides"), "free_dims")
        self.entries = _tip(KeyValueEdit("session.disable_prepacking=1", "config entries"), "entries")
        form.addRow("Free dimension overrides:", self.free_dims)
        form.addRow("Session config entries:", self.entries)

        inputs_box = _tip(QGroupBox("Inputs"), "inputs")
        form = QFormLayout(inputs_box)
        self.feed_mode = QComboBox()
        self.feed_mode.addItems(["random", "zeros", "files"])
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.vocab = QSpinBox()
        self.vocab.setRange(1, 2**31 - 1)
        self.vocab.setToolTip("Integer inputs (token ids) are drawn below this number.")
        self.files = KeyValueEdit("input_ids=/path/ids.npy  (or *=/path/all.npz)", "input files")
        add_file = QPushButton("Add file…")
        add_file.clicked.connect(self._add_file)
        self.dims = DimsTable()
        form.addRow("Values:", self.feed_mode)
        form.addRow("Seed:", self.seed)
        form.addRow("Vocabulary size:", self.vocab)
        form.addRow("Files:", self.files)
        form.addRow("", add_file)
        form.addRow("Symbolic dims:", self.dims)

        buttons = QHBoxLayout()
        for text, slot in (("Load preset…", self.load_preset), ("Save preset…", self.save_preset),
                           ("Copy as Python", self.copy_python), ("Reset to defaults", self.reset)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        buttons.addStretch()
        self.message = QLabel()
        buttons.addWidget(self.message)

        grid.addWidget(providers_box, 0, 0)
        grid.addWidget(inputs_box, 1, 0)
        grid.addWidget(graph_box, 0, 1)
        grid.addWidget(threads_box, 1, 1, 2, 1)
        grid.addWidget(advanced_box, 2, 0)
        grid.addLayout(buttons, 3, 0, 1, 2)
        grid.setRowStretch(4, 1)

        self.set_config(self._pending or self._defaults())
        self._pending = None
        if self.window.providers_info:
            self.providers.set_availability(self.window.providers_info["providers"])
        self.window.providers_ready.connect(lambda info: self.providers.set_availability(info["providers"]))
        self.jobs.start("Check session settings", CAPABILITIES, {},
                        on_result=lambda info: self._set_spin_support(set(info["config_keys"])))

    @staticmethod
    def _defaults():
        from app.core.session.config import SessionConfig
        return SessionConfig()

    def _set_spin_support(self, keys: set | None) -> None:
        """Spin time and back-off exist only in newer ORT builds."""
        for pool in ("intra", "inter"):
            for widget, key in ((self.spin_us[pool], f"session.{pool}_op.spin_duration_us"),
                                (self.backoff[pool], f"session.{pool}_op.spin_backoff_max")):
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
        self._dim_names = list(dict.fromkeys(names))
        current = self.dims.dims()
        self.dims.set_dims(self._dim_names, {k: v for k, v in current.items() if k in self._dim_names})

    # the config --------------------------------------------------------------
    def config(self):
        """The SessionConfig the widgets describe (raises UserError on a bad entry)."""
        from app.core.session.input_spec import FeedSpec
        from app.core.session.config import LOG_LEVELS, SessionConfig

        if not self.built:
            return SessionConfig.from_dict((self._pending or self._defaults()).to_dict())

        def optional(spin: QSpinBox, unset: int):
            return None if spin.value() == unset else spin.value()

        spinning = {0: None, 1: True, 2: False}
        files = self.files.pairs()
        config = SessionConfig(
            providers=self.providers.providers(),
            graph_optimization_level=self.opt_level.currentText(),
            execution_mode=self.mode.currentText(),
            intra_op_num_threads=self.intra.value(),
            inter_op_num_threads=self.inter.value(),
            intra_op_thread_affinities=self.affinity.text().strip(),
            intra_op_allow_spinning=spinning[self.spinning["intra"].currentIndex()],
            inter_op_allow_spinning=spinning[self.spinning["inter"].currentIndex()],
            intra_op_spin_duration_us=optional(self.spin_us["intra"], -1),
            inter_op_spin_duration_us=optional(self.spin_us["inter"], -1),
            intra_op_spin_backoff_max=optional(self.backoff["intra"], 0),
            inter_op_spin_backoff_max=optional(self.backoff["inter"], 0),
            dynamic_block_base=self.block_base.value(),
            enable_mem_pattern=self.mem_pattern.isChecked(),
            enable_cpu_mem_arena=self.cpu_arena.isChecked(),
            use_deterministic_compute=self.deterministic.isChecked(),
            log_severity_level=LOG_LEVELS[self.log_level.currentText()],
            free_dimension_overrides=self.free_dims.pairs(whole=True),
            config_entries=self.entries.pairs(),
            io_binding=self.io_binding.isChecked(),
            inputs=FeedSpec(mode=self.feed_mode.currentText(), seed=self.seed.value(), dims=self.dims.dims(),
                            shapes=dict(self._shapes), files=files, vocab_size=self.vocab.value()))
        config.validate()
        return config

    def set_config(self, config) -> None:
        from app.core.session.config import LOG_LEVELS

        if not self.built:
            self._pending = config
            return
        self.providers.set_providers(config.providers)
        self.opt_level.setCurrentText(config.graph_optimization_level)
        self.mode.setCurrentText(config.execution_mode)
        self.intra.setValue(config.intra_op_num_threads)
        self.inter.setValue(config.inter_op_num_threads)
        self.affinity.setText(config.intra_op_thread_affinities)
        to_index = {None: 0, True: 1, False: 2}
        self.spinning["intra"].setCurrentIndex(to_index[config.intra_op_allow_spinning])
        self.spinning["inter"].setCurrentIndex(to_index[config.inter_op_allow_spinning])
        for pool in ("intra", "inter"):
            duration = getattr(config, f"{pool}_op_spin_duration_us")
            backoff = getattr(config, f"{pool}_op_spin_backoff_max")
            self.spin_us[pool].setValue(-1 if duration is None else duration)
            self.backoff[pool].setValue(0 if backoff is None else backoff)
        self.block_base.setValue(config.dynamic_block_base)
        self.mem_pattern.setChecked(config.enable_mem_pattern)
        self.cpu_arena.setChecked(config.enable_cpu_mem_arena)
        self.deterministic.setChecked(config.use_deterministic_compute)
        self.io_binding.setChecked(config.io_binding)
        self.log_level.setCurrentText({v: k for k, v in LOG_LEVELS.items()}[config.log_severity_level])
        self.free_dims.set_pairs(config.free_dimension_overrides)
        self.entries.set_pairs(config.config_entries)
        feeds = config.inputs
        self.feed_mode.setCurrentText(feeds.mode)
        self.seed.setValue(feeds.seed)
        self.vocab.setValue(feeds.vocab_size)
        self.files.set_pairs(feeds.files)
        self._shapes = dict(feeds.shapes)
        self.dims.set_dims(self._dim_names, feeds.dims)

    # actions -------------------------------------------------------------------
    def _try_config(self):
        from app.core.jobs.errors import UserError
        try:
            return self.config()
        except UserError as exc:
            self.window.show_error("Session", exc.message)
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
            self.window.show_error("Load preset", exc.message)
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
            self.window.show_error("Save preset", f"{path}: cannot be written ({exc.strerror})")
            return
        self.message.setText(f"Saved {path}")

    def python_snippet(self) -> str | None:
        from app.core.session.create import to_python

        config = self._try_config()
        if config is None:
            return None
        model = self.window.current_model()
        return to_python(config, model.path if model is not None else "model.onnx")

    def copy_python(self) -> None:
        from PySide6.QtGui import QGuiApplication

        snippet = self.python_snippet()
        if snippet is not None:
            QGuiApplication.clipboard().setText(snippet)
            self.message.setText("Python code copied to the clipboard")

    def reset(self) -> None:
        self.set_config(self._defaults())
        self.message.setText("Back to ONNX Runtime's defaults")

    def _add_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Input data", "", "NumPy arrays (*.npy *.npz)")
        if not path:
            return
        model = self.window.current_model()
        names = [i["name"] for i in model.summary["inputs"]] if model is not None and model.summary else []
        key = "*" if path.endswith(".npz") or len(names) <= 1 else None
        if key is None:
            from PySide6.QtWidgets import QInputDialog
            key, ok = QInputDialog.getItem(self, "Input data", "Which input does this array feed?", names, 0, False)
            if not ok:
                return
        pairs = self.files.pairs()
        pairs[key] = path
        self.files.set_pairs(pairs)
        self.feed_mode.setCurrentText("files")
