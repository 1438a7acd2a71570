"""Form pieces of the Session panel: the provider list with one options form per
provider, and key=value editors."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette, QRegularExpressionValidator
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget,
                               QListWidgetItem, QPlainTextEdit, QPushButton, QStackedWidget, QVBoxLayout, QWidget)

from app.core.jobs.errors import UserError

NAME_ROLE = Qt.ItemDataRole.UserRole
#: what each provider is for, in a sentence (shown as the list's tooltips)
PROVIDER_HELP = {
    "CPUExecutionProvider": "ONNX Runtime's own CPU kernels. Always there, and the fallback for any node another "
                            "provider cannot run.",
    "CUDAExecutionProvider": "NVIDIA GPUs through CUDA and cuDNN. Nodes it cannot run go to the CPU, with copies "
                             "in between.",
    "TensorrtExecutionProvider": "NVIDIA's TensorRT compiler: builds an optimised engine for the parts of the graph "
                                 "it supports (slow first start, fast runs). Put CUDA after it for the rest.",
    "DmlExecutionProvider": "DirectX 12 (DirectML) on Windows: any GPU vendor.",
    "OpenVINOExecutionProvider": "Intel's OpenVINO: Intel CPUs, integrated GPUs and NPUs.",
}


def short_provider(name: str) -> str:
    return {"TensorrtExecutionProvider": "TensorRT", "DmlExecutionProvider": "DirectML"}.get(
        name, name.replace("ExecutionProvider", ""))


class _OptionsForm(QWidget):
    """The options of one provider, generated from PROVIDER_OPTIONS."""

    changed = Signal()

    def __init__(self, name: str, schema: dict):
        super().__init__()
        self.name, self.schema, self.fields = name, schema, {}
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        #: a provider ORTune has no form for takes its options as free KEY=VALUE lines; ORT checks them
        self.free = None
        if name == "CPUExecutionProvider":
            form.addRow(QLabel("No options: the CPU provider follows the thread settings."))
        elif not schema:
            self.free = KeyValueEdit("key=value", f"{short_provider(name)} options")
            self.free.setToolTip("This provider's own options, one KEY=VALUE a line, passed to it as they are; "
                                 "ONNX Runtime says which one it refuses when the session starts.")
            self.free.textChanged.connect(self.changed)
            form.addRow("Options:", self.free)
        for key, (kind, default, help_text) in schema.items():
            if kind is bool:
                field = QCheckBox()
                field.toggled.connect(self.changed)
            elif isinstance(kind, tuple):
                field = QComboBox()
                field.addItems(list(kind))
                field.currentIndexChanged.connect(self.changed)
            else:
                field = QLineEdit()
                if kind is int:
                    field.setValidator(QRegularExpressionValidator(r"\d{0,19}"))
                field.textChanged.connect(self.changed)
            field.setToolTip(help_text)
            self.fields[key] = field
            form.addRow(key + ":", field)
        self.set_options({})

    def set_options(self, options: dict) -> None:
        if self.free is not None:
            self.free.set_pairs(options)
        for key, (kind, default, _) in self.schema.items():
            value = options.get(key, default)
            field = self.fields[key]
            if kind is bool:
                field.setChecked(str(value).lower() in ("1", "true"))
            elif isinstance(kind, tuple):
                field.setCurrentText(str(value))
            else:
                field.setText("" if value in ("", None) else str(value))

    def options(self) -> dict[str, str]:
        """Only what differs from ORT's defaults, so a preset stays short."""
        if self.free is not None:
            return self.free.pairs()
        result = {}
        for key, (kind, default, _) in self.schema.items():
            field = self.fields[key]
            if kind is bool:
                value, default_text = ("1" if field.isChecked() else "0"), ("1" if default else "0")
            elif isinstance(kind, tuple):
                value, default_text = field.currentText(), str(default)
            else:
                value, default_text = field.text().strip(), str(default)
                if value == "":
                    continue
            if value != default_text:
                result[key] = value
        return result


class ProviderEditor(QWidget):
    """Execution providers in priority order: tick to use, arrows to reorder, and the
    selected provider's options below. Unavailable providers are greyed out with the reason."""

    changed = Signal()

    def __init__(self):
        from app.core.session.providers import FEATURED
        from app.core.session.config import PROVIDER_OPTIONS

        super().__init__()
        self.list = QListWidget()
        self.list.setMaximumHeight(130)
        self.forms = QStackedWidget()
        self.pages: dict[str, _OptionsForm] = {}
        self.reasons: dict[str, str] = {}
        for name in FEATURED:
            self._add(name, PROVIDER_OPTIONS.get(name, {}))
        up, down = QPushButton("▲"), QPushButton("▼")
        up.setToolTip("Try this provider earlier")
        down.setToolTip("Try this provider later")
        up.clicked.connect(lambda: self._move(-1))
        down.clicked.connect(lambda: self._move(1))
        buttons = QVBoxLayout()
        buttons.addWidget(up)
        buttons.addWidget(down)
        buttons.addStretch()
        row = QHBoxLayout()
        row.addWidget(self.list, 1)
        row.addLayout(buttons)
        self.devices: list[dict] = []
        self.device_note = QLabel()
        self.device_note.setTextFormat(Qt.TextFormat.PlainText)      # device names come from drivers
        self.device_note.setWordWrap(True)
        self.unavailable = QLabel()
        self.unavailable.setTextFormat(Qt.TextFormat.PlainText)     # a plugin names its own providers
        self.unavailable.setWordWrap(True)
        self.unavailable.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.forms)
        layout.addWidget(self.device_note)
        layout.addWidget(self.unavailable)
        self.list.currentItemChanged.connect(self._show_options)
        self.list.itemChanged.connect(lambda _item: self.changed.emit())
        self.list.setCurrentRow(0)
        self._set_checked({"CPUExecutionProvider"})

    def _add(self, name: str, schema: dict) -> None:
        item = QListWidgetItem(short_provider(name))
        item.setData(NAME_ROLE, name)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Unchecked)
        item.setToolTip(PROVIDER_HELP.get(name, name))
        self.list.addItem(item)
        page = _OptionsForm(name, schema)
        page.changed.connect(self.changed)
        self.pages[name] = page
        self.forms.addWidget(page)

    def _items(self) -> list[QListWidgetItem]:
        return [self.list.item(i) for i in range(self.list.count())]

    def _move(self, step: int) -> None:
        row = self.list.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.list.count():
            return
        item = self.list.takeItem(row)
        self.list.insertItem(target, item)
        self.list.setCurrentRow(target)
        self.changed.emit()

    def _show_options(self, item) -> None:
        if item is not None:
            self.forms.setCurrentWidget(self.pages[item.data(NAME_ROLE)])
            self._show_devices(item.data(NAME_ROLE))

    def _show_devices(self, name: str) -> None:
        """The devices the selected provider lists (ORT's device API; plugins list theirs)."""
        from app.gui.shell.providers_dialog import device_line

        own = [d for d in self.devices if d["provider"] == name]
        self.device_note.setText("\n".join(["Devices:", *map(device_line, own)]) if own else "")

    def _set_checked(self, names: set[str]) -> None:
        for item in self._items():
            if item.data(NAME_ROLE) in names:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if item.data(NAME_ROLE) in names else Qt.CheckState.Unchecked)

    def set_availability(self, providers: list[dict], devices: list[dict] | None = None) -> None:
        """From the provider probe: grey out what cannot start here, with the reason; keep the
        devices each provider lists, to show beside the selected one."""
        from app.core.session.config import PROVIDER_OPTIONS

        self.devices = list(devices or [])

        known = {item.data(NAME_ROLE) for item in self._items()}
        for info in providers:
            if info["name"] not in known:
                self._add(info["name"], PROVIDER_OPTIONS.get(info["name"], {}))
        self.reasons = {p["name"]: p["reason"] for p in providers if not p["available"]}
        grey = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        for item in self._items():
            name = item.data(NAME_ROLE)
            reason = self.reasons.get(name)
            checked = item.checkState() == Qt.CheckState.Checked
            if reason:
                # Greyed and not tickable; one ticked by a preset stays ticked (and can be
                # unticked), so the job says why it cannot start instead of quietly using the CPU.
                if not checked:
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)
                item.setForeground(grey)
                item.setText(f"{short_provider(name)} — unavailable")
                item.setToolTip(reason)
            else:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setData(Qt.ItemDataRole.ForegroundRole, None)
                item.setText(short_provider(name))
                item.setToolTip(PROVIDER_HELP.get(name, name))
        self.unavailable.setText("\n".join(f"{short_provider(n)}: {r}" for n, r in self.reasons.items()))
        if self.list.currentItem() is not None:
            self._show_devices(self.list.currentItem().data(NAME_ROLE))

    def set_providers(self, specs) -> None:
        """Put the given providers first, in their order, ticked, with their options."""
        names = [spec.name for spec in specs]
        for spec in specs:
            if spec.name not in self.pages:
                self._add(spec.name, {})
        items = {item.data(NAME_ROLE): item for item in self._items()}
        order = names + [n for n in items if n not in names]
        for row, name in enumerate(order):
            self.list.takeItem(self.list.row(items[name]))
            self.list.insertItem(row, items[name])
        self._set_checked(set(names))
        for name, page in self.pages.items():
            page.set_options(next((s.options for s in specs if s.name == name), {}))
        self.list.setCurrentRow(0)

    def providers(self):
        from app.core.session.config import ProviderSpec
        chosen = [item.data(NAME_ROLE) for item in self._items() if item.checkState() == Qt.CheckState.Checked]
        return [ProviderSpec(name, self.pages[name].options()) for name in chosen] or [ProviderSpec("CPUExecutionProvider")]


class KeyValueEdit(QPlainTextEdit):
    """One KEY=VALUE a line."""

    def __init__(self, placeholder: str, what: str):
        super().__init__()
        self.what = what
        self.setPlaceholderText(placeholder)
        self.setMaximumHeight(70)

    def set_pairs(self, pairs: dict) -> None:
        self.setPlainText("\n".join(f"{k}={v}" for k, v in pairs.items()))

    def pairs(self, whole: bool = False) -> dict:
        result = {}
        for number, line in enumerate(self.toPlainText().splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                raise UserError("bad-option", f"Session › {self.what}, line {number}: expected KEY=VALUE, "
                                              f"not {line.strip()!r}")
            value = value.strip()
            if whole:
                if not value.isdigit():
                    raise UserError("bad-option", f"Session › {self.what}, line {number}: {key.strip()} needs a "
                                                  f"whole number, not {value!r}")
                value = int(value)
            result[key.strip()] = value
        return result
