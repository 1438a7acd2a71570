"""The Session tab's form from one table: each row names a SessionState field, the kind
of widget that edits it, its range or choices, its label, its box and its tip.
FormBinding makes the widgets and keeps them and the state in step, both ways."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox

from app.core.jobs.errors import UserError
from app.core.jobs.memory import DEFAULT_LIMIT
from app.core.session.config import EXECUTION_MODES, LOG_LEVELS, OPT_LEVELS
from app.core.session.input_spec import FEED_MODES, IMAGE_LAYOUTS, IMAGE_PRESETS
from app.gui.panels.session.forms import KeyValueEdit, ProviderEditor

SPIN = (("ORT default (spin)", None), ("spin", True), ("do not spin", False))
BIG = 2**31 - 1

#: the boxes of the tab: key -> (title, tip)
GROUPS = {
    "providers": ("Execution providers (in priority order)", ""),
    "graph": ("Graph and memory", ""),
    "threads": ("Threads", ""),
    "advanced": ("Free dimensions and other settings", ""),
    "inputs": ("Inputs", "What every job feeds the model: a size for each dimension the model leaves open, and "
                         "seeded random values of the right type (integer inputs below the vocabulary size, masks "
                         "all ones), zeros, or your own .npy/.npz files."),
}


@dataclass(frozen=True)
class Field:
    name: str                    # a SessionState field
    group: str                   # a key of GROUPS
    kind: str                    # choice | number | check | text | pairs | providers
    label: str = ""              # the row's label (a check box's own text)
    tip: str = ""
    choices: tuple = ()          # choice: ((text, value), ...)
    low: int = 0                 # number: the range
    high: int = 0
    special: str = ""            # number: the text shown at the lowest value
    unset_at: int | None = None  # number: the value that means "unset" (None: ORT's default)
    placeholder: str = ""        # text and pairs
    whole: bool = False          # pairs: the values are whole numbers


def _same(values) -> tuple:
    return tuple((value, value) for value in values)


def _spin_fields(pool: str, name: str) -> list[Field]:
    return [
        Field(f"{pool}_op_allow_spinning", "threads", "choice", f"{name} spinning:", choices=SPIN,
              tip="Idle threads can keep polling for work (spinning) instead of sleeping: lower latency between "
                  "nodes, more CPU burnt. Turning it off helps when other work shares the machine."),
        Field(f"{pool}_op_spin_duration_us", "threads", "number", f"{name} spin time (µs):", low=-1,
              high=10_000_000, special="ORT default", unset_at=-1,
              tip="How long an idle thread spins before it sleeps, in µs."),
        Field(f"{pool}_op_spin_backoff_max", "threads", "number", f"{name} spin back-off:", high=1024,
              special="ORT default", unset_at=0,
              tip="Spin more gently: each spin step doubles its pause up to this power of two, for less power "
                  "use over the same spin time."),
    ]


FIELDS: list[Field] = [
    Field("providers", "providers", "providers"),
    Field("graph_optimization_level", "graph", "choice", "Optimisation level:", choices=_same(OPT_LEVELS),
          tip="How much ONNX Runtime rewrites the graph before running it. Basic folds constants and drops "
              "redundant nodes; extended adds fusions specific to ONNX Runtime's kernels; all also changes memory "
              "layouts for the CPU. More optimisation usually means faster runs and a slower start."),
    Field("execution_mode", "graph", "choice", "Execution mode:", choices=_same(EXECUTION_MODES),
          tip="Sequential runs one node at a time (each node may still use many threads). Parallel also runs "
              "independent branches at the same time; it helps only graphs with wide, independent branches."),
    Field("enable_mem_pattern", "graph", "check", "Memory pattern",
          tip="Plan the memory of all intermediate tensors once, from the first run, and reuse the plan. "
              "Helps when input shapes stay the same."),
    Field("enable_cpu_mem_arena", "graph", "check", "CPU memory arena",
          tip="Keep freed CPU memory in a pool for the next allocation instead of returning it to the system: "
              "faster, but the process keeps the memory it once needed."),
    Field("use_deterministic_compute", "graph", "check", "Deterministic compute",
          tip="Prefer kernels that give bit-identical results run after run (some are slower)."),
    Field("io_binding", "graph", "check", "IO binding (inputs and outputs on the device)",
          tip="Bind inputs and outputs to buffers on the provider's device so runs skip the copies and "
              "allocations of plain run() calls."),
    Field("memory_limit", "graph", "text", "Memory limit:", placeholder=f"{DEFAULT_LIMIT} (the settings')",
          tip="The most memory each job's process may hold: a size (4G, 512M) or a share of the memory free when "
              "it starts (50%). Past it the job stops and names the inputs that needed so much, before the "
              "system's out-of-memory killer ends something else. Empty: the settings' limit."),
    Field("log_severity_level", "graph", "choice", "Log severity:", choices=tuple(LOG_LEVELS.items()),
          tip="How much ONNX Runtime writes to its log; verbose shows every node's provider."),
    Field("intra_op_num_threads", "threads", "number", "Intra-op threads:", high=1024, special="ORT default",
          tip="Threads that split the work inside one node (a big MatMul or Conv). 0 lets ONNX Runtime use one "
              "per physical core."),
    Field("inter_op_num_threads", "threads", "number", "Inter-op threads:", high=1024, special="ORT default",
          tip="Threads that run independent nodes at once; used only in parallel execution mode."),
    Field("intra_op_thread_affinities", "threads", "text", "Intra-op affinities:", placeholder="e.g. 1;2",
          tip="Pin the intra-op threads to cores: one group per thread except the first, separated by ';' "
              "(e.g. '1;2' or '3,4;5,6'). Usually best left empty; useful to keep sessions off each other's cores."),
    *_spin_fields("intra", "Intra-op"),
    *_spin_fields("inter", "Inter-op"),
    Field("dynamic_block_base", "threads", "number", "Dynamic block base:", high=64, special="off",
          tip="Hand out work in shrinking pieces so threads finish together; lowers latency variance on busy "
              "machines (4 is a good start). 0 keeps the fixed split."),
    Field("free_dimension_overrides", "advanced", "pairs", "Free dimension overrides:", placeholder="batch=1",
          whole=True, tip="Fix a symbolic dimension to a number inside ONNX Runtime, so it can plan and optimise "
                          "for that exact shape. One NAME=VALUE a line."),
    Field("config_entries", "advanced", "pairs", "Session config entries:",
          placeholder="session.disable_prepacking=1",
          tip="Any other session setting ONNX Runtime knows, as KEY=VALUE lines (e.g. session.disable_prepacking=1)."),
    Field("inputs.mode", "inputs", "choice", "Values:", choices=_same(FEED_MODES)),
    Field("inputs.seed", "inputs", "number", "Seed:", high=BIG),
    Field("inputs.vocab_size", "inputs", "number", "Vocabulary size:", low=1, high=BIG,
          tip="Integer inputs (token ids) are drawn below this number."),
    Field("inputs.data", "inputs", "text", "Data folder:", placeholder="a folder of .npz/.npy files or images",
          tip="Your own samples: .npz files (one array per input, by name), .npy files (one-input models) or images "
              "(resized to the input's size). Beside them, optionally, labels.csv (sample,label) and "
              "expected/<sample>.npy or .npz (the outputs it should give). A single run takes the first sample; "
              "Compare scores every model on all of them; int8-static calibrates on them."),
    Field("inputs.sample", "inputs", "number", "Sample:", high=BIG,
          tip="The sample of the data folder a single run is fed (0: the first, in name order)."),
    Field("inputs.image_preset", "inputs", "choice", "Image preset:", choices=_same(IMAGE_PRESETS),
          tip="How the data folder's images are normalised: imagenet (0–1, ImageNet mean and std), unit (0–1), "
              "raw (0–255)."),
    Field("inputs.image_layout", "inputs", "choice", "Image layout:", choices=_same(IMAGE_LAYOUTS),
          tip="Where the images' colour channels go; auto reads it from the input's shape."),
]
#: the fields the Inputs table (inputs_table.py) edits, a row per model input, rather than one widget each
TABLE_FIELDS = frozenset({"inputs.dims", "inputs.shapes", "inputs.files", "inputs.values", "inputs.probed"})

#: what a pairs field is called in its error messages
PAIRS_NAMES = {"free_dimension_overrides": "free dimension overrides", "config_entries": "config entries"}


def make_widget(field: Field):
    if field.kind == "choice":
        widget = QComboBox()
        widget.addItems([text for text, _ in field.choices])
        signal = widget.currentIndexChanged
    elif field.kind == "number":
        widget = QSpinBox()
        widget.setRange(field.low, field.high)
        if field.special:
            widget.setSpecialValueText(field.special)
        signal = widget.valueChanged
    elif field.kind == "check":
        widget = QCheckBox(field.label)
        signal = widget.toggled
    elif field.kind == "text":
        widget = QLineEdit()
        widget.setPlaceholderText(field.placeholder)
        signal = widget.textChanged
    elif field.kind == "pairs":
        widget = KeyValueEdit(field.placeholder, PAIRS_NAMES[field.name])
        signal = widget.textChanged
    elif field.kind == "providers":
        widget = ProviderEditor()
        signal = widget.changed
    else:
        raise ValueError(f"unknown widget kind {field.kind!r}")
    if field.tip:
        widget.setToolTip(field.tip)
    return widget, signal


def read_widget(field: Field, widget) -> Any:
    """The field's value as the widget shows it (UserError for text it cannot read)."""
    kind = field.kind
    if kind == "choice":
        return field.choices[widget.currentIndex()][1]
    if kind == "number":
        value = widget.value()
        return None if field.unset_at is not None and value == field.unset_at else value
    if kind == "check":
        return widget.isChecked()
    if kind == "text":
        return widget.text().strip()
    if kind == "pairs":
        return widget.pairs(whole=field.whole)
    return widget.providers()


def write_widget(field: Field, widget, value: Any) -> None:
    kind = field.kind
    if kind == "choice":
        values = [v for _, v in field.choices]
        if value in values:
            widget.setCurrentIndex(values.index(value))
    elif kind == "number":
        widget.setValue(field.unset_at if value is None else value)
    elif kind == "check":
        widget.setChecked(bool(value))
    elif kind == "text":
        widget.setText(value)
    elif kind == "pairs":
        widget.set_pairs(value)
    else:
        widget.set_providers(value)


class FormBinding:
    """Widgets for `fields`, bound to `state`: a widget's change sets its field (once), and a
    change of the state redraws the widgets of the fields that changed. Neither direction
    echoes back: widgets written from the state do not write the state, and the widget the
    user is editing is not redrawn under the cursor."""

    def __init__(self, state, fields: list[Field] = FIELDS):
        self.state = state
        self.fields = {field.name: field for field in fields}
        self.widgets: dict[str, Any] = {}
        self._writing = False
        self._editing: str | None = None
        for field in fields:
            widget, signal = make_widget(field)
            self.widgets[field.name] = widget
            signal.connect(lambda *_args, name=field.name: self._widget_changed(name))
        self.write(set(self.fields))
        state.subscribe(self._state_changed)

    def close(self) -> None:
        self.state.unsubscribe(self._state_changed)

    def pull(self, name: str) -> None:
        """Set the field from its widget (e.g. after the form changed the widget's rows itself)."""
        self._widget_changed(name)

    def write(self, names) -> None:
        self._writing = True
        try:
            for name in names:
                if name in self.widgets and name != self._editing:
                    write_widget(self.fields[name], self.widgets[name], self.state.get(name))
        finally:
            self._writing = False

    def _widget_changed(self, name: str) -> None:
        if self._writing:
            return
        try:
            value = read_widget(self.fields[name], self.widgets[name])
        except UserError as exc:
            self.state.report_problem(name, exc.message)
            return
        self._editing = name
        try:
            self.state.set(**{name: value})
        finally:
            self._editing = None

    def _state_changed(self, _state, changed) -> None:
        self.write(changed)
