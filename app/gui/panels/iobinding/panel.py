"""IO Binding tab: the current model fed five ways on one provider, and where the copies go."""

from __future__ import annotations

import html
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QSpinBox, QSplitter, QTextBrowser,
                               QWidget)

from app.core.units import human_bytes
from app.gui.shell.panel import Panel
from app.core.iobinding.jobs import IOBINDING

#: (short name, label, ORT provider) in the order the combo lists them
PROVIDERS = [("cpu", "CPU", "CPUExecutionProvider"), ("cuda", "CUDA", "CUDAExecutionProvider"),
             ("dml", "DirectML", "DmlExecutionProvider")]
COLUMNS = ["Mode", "Mean ms", "p50 ms", "p99 ms", "Moved MB/run", "Copy ms", "× plain (p50)", "Max diff"]


class IOBindingPanel(Panel):
    title = "IO Binding"

    def build(self) -> None:
        from app.gui.widgets.chart_base import BarChart
        from app.gui.widgets.run_caption import RunCaption
        from app.gui.widgets.table import DataTable

        self.job = None
        self.results: dict[str, dict] = {}
        self.dim_spins: dict[str, QSpinBox] = {}
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.layout_.addWidget(self.heading)

        controls = QHBoxLayout()
        self.provider_combo = QComboBox()
        for short, label, _ in PROVIDERS:
            self.provider_combo.addItem(label, short)
        self.provider_combo.currentIndexChanged.connect(lambda _: self._update_provider_note())
        self.dims_box = QWidget()
        self.dims_layout = QHBoxLayout(self.dims_box)
        self.dims_layout.setContentsMargins(0, 0, 0, 0)
        self.iterations = QSpinBox(minimum=1, maximum=1_000_000, value=100)
        self.warmup = QSpinBox(minimum=0, maximum=100_000, value=10)
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        for widget in (QLabel("Provider:"), self.provider_combo, QLabel("Input size:"), self.dims_box,
                       QLabel("Runs per mode:"), self.iterations, QLabel("Warm-up:"), self.warmup):
            controls.addWidget(widget)
        controls.addStretch(1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        self.layout_.addLayout(controls)

        self.provider_note = QLabel()
        self.provider_note.setWordWrap(True)
        self.layout_.addWidget(self.provider_note)
        self.status = QLabel()
        self.layout_.addWidget(self.status)
        self.caption = RunCaption("No run of this model yet.")
        self.layout_.addWidget(self.caption)

        self.table = DataTable(COLUMNS)
        self.table.decimals = 3
        self.chart = BarChart("Median latency (ms)")
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.table)
        top.addWidget(self.chart)
        top.setSizes([700, 400])
        self.explanation = QTextBrowser()
        self.explanation.setOpenExternalLinks(False)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(top)
        body.addWidget(self.explanation)
        body.setSizes([330, 260])
        self.layout_.addWidget(body, 1)
        self.caption.follow(body)

        self.context.providers_ready.connect(self.set_providers)
        self.set_providers(self.context.providers_info)

    # providers ---------------------------------------------------------------
    def set_providers(self, info: dict | None) -> None:
        """Enable the providers that really start here; the others say why not."""
        found = {p["name"]: p for p in (info or {}).get("providers", [])}
        self.checking = info is None
        self.unusable: dict[str, str] = {}
        for index, (_, label, name) in enumerate(PROVIDERS):
            if name == "CPUExecutionProvider":
                usable, reason = True, ""
            elif info is None:
                usable, reason = False, "checking which providers start here…"
            else:
                entry = found.get(name)
                usable = bool(entry and entry["available"])
                reason = "" if usable else (entry["reason"] if entry else "not part of this ONNX Runtime build")
            item = self.provider_combo.model().item(index)
            item.setEnabled(usable)
            item.setToolTip(reason)
            if not usable and not self.checking:
                self.unusable[label] = reason
        current = self.provider_combo.currentIndex()
        if not self.provider_combo.model().item(current).isEnabled():
            self.provider_combo.setCurrentIndex(0)
        self._update_provider_note()

    def _update_provider_note(self) -> None:
        from app.core.iobinding.modes import PROVIDER_NOTES

        parts = ["Checking which execution providers start here…"] if self.checking else []
        if self.provider_combo.currentData() == "dml":
            parts.append(html.escape(PROVIDER_NOTES["dml"]))
        for label, reason in self.unusable.items():
            parts.append(f"<b>{label}</b> is not usable here: {html.escape(reason)}")
        self.provider_note.setText("<br>".join(parts))

    # the current model -------------------------------------------------------
    def model_changed(self, model) -> None:
        self._fill_dims(model)
        self.run_button.setEnabled(model is not None and model.summary is not None and self.job is None)
        if model is None:
            self.heading.setText("Open a model to compare plain runs with IO binding and device tensors.")
        else:
            self.heading.setText(f"<b>{html.escape(model.label)}</b> — a plain run against IO binding with "
                                 "inputs and outputs kept on the device, measured in a separate process.")
        result = self.results.get(model.path) if model is not None else None
        self.show_result(result)

    def _fill_dims(self, model) -> None:
        from app.core.session.inputs import default_dim

        while self.dims_layout.count():
            self.dims_layout.takeAt(0).widget().deleteLater()
        self.dim_spins = {}
        summary = model.summary if model is not None else None
        if summary is None:
            return
        given = self.context.session.config().inputs.dims
        names = [d for i in summary["inputs"] for d in (i["shape"] or []) if isinstance(d, str) and d != "?"]
        for name in dict.fromkeys(names):
            spin = QSpinBox(minimum=1, maximum=1_000_000, value=int(given.get(name, default_dim(name))))
            spin.setToolTip(f"the value of the dimension '{name}' in the generated inputs")
            self.dim_spins[name] = spin
            self.dims_layout.addWidget(QLabel(f"{name}"))
            self.dims_layout.addWidget(spin)
        if not self.dim_spins:
            self.dims_layout.addWidget(QLabel("fixed by the model"))

    # running -------------------------------------------------------------------
    def start(self) -> None:
        model = self.context.current_model()
        if model is None or self.job is not None:
            return
        config = self.context.session.config()
        config.inputs.dims.update({name: spin.value() for name, spin in self.dim_spins.items()})
        provider = self.provider_combo.currentData()
        params = {"path": model.path, "session": config.to_dict(), "provider": provider,
                  "iterations": self.iterations.value(), "warmup": self.warmup.value()}
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText("Starting…")
        self.caption.running(model.label)
        self.job = self.jobs.start(f"IO binding: {model.label} on {self.provider_combo.currentText()}",
                                   IOBINDING, params,
                                   on_result=lambda result, path=model.path: self._finished(path, result),
                                   on_error=lambda _exc: self._finished(None, None),
                                   on_progress=lambda _fraction, message: self.status.setText(message))

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def _finished(self, path: str | None, result: dict | None) -> None:
        self.job = None
        self.cancel_button.setEnabled(False)
        model = self.context.current_model()
        self.run_button.setEnabled(model is not None and model.summary is not None)
        self.status.setText("" if result is not None else "Not finished.")
        if result is None:
            self.caption.stopped()
            return
        result.setdefault("created", time.time())
        result["model_path"] = path
        self.results[path] = result
        self.context.report_inputs(path, result["inputs"])
        self.show_result(self.results.get(model.path) if model is not None else None)

    # showing -------------------------------------------------------------------
    def show_result(self, result: dict | None) -> None:
        if self.job is None:
            if result is None:
                self.caption.clear()
            else:
                self.caption.show_run(result["model_path"], Path(result["model"]).name, result["inputs"],
                                      result["created"])
        if result is None:
            self.table.set_rows([])
            self.chart.set_bars([], [])
            self.explanation.setHtml("")
            return
        from app.gui.widgets.theme import series_colors

        rows, labels, values, brushes = [], [], [], []
        colors = series_colors()
        for index, mode in enumerate(result["modes"]):
            stats = mode["latency_ms"] or {}
            diff = mode["max_abs_diff"]
            label = f"{index + 1}. {mode['title']}"
            rows.append([label if stats else f"{label} ({mode['status']})", stats.get("mean"), stats.get("p50"),
                         stats.get("p99"), mode["bytes_copied_per_run"] / 2 ** 20,
                         mode["copy_ms_per_run"], mode["speedup_vs_plain"],
                         None if diff is None else f"{diff:.2g}"])
            if stats:
                labels.append(label)
                values.append(stats["p50"])
                brushes.append(colors[index % len(colors)])
        self.table.set_rows(rows)
        self.chart.set_bars(labels, values, value_name="p50 ms", brushes=brushes)
        self.explanation.setHtml(self.explanation_html(result))

    @staticmethod
    def explanation_html(result: dict) -> str:
        parts = [f"<p><b>{html.escape(result['provider'])}</b>, device \"{html.escape(result['device'])}\": "
                 f"{human_bytes(result['input_bytes'])} of inputs and {human_bytes(result['output_bytes'])} of "
                 f"outputs per run; {result['iterations']} runs per mode, measured in alternating rounds.</p>",
                 f"<p>{html.escape(result['note'])}</p>"]
        transfer = result.get("transfer")
        if transfer and transfer.get("to_device_bytes_per_s"):
            rate_back = transfer.get("to_host_bytes_per_s")
            parts.append(f"<p>Measured copy rates: host→device {human_bytes(transfer['to_device_bytes_per_s'])}/s"
                         + (f", device→host {human_bytes(rate_back)}/s" if rate_back else "") + ".</p>")
        items = []
        for mode in result["modes"]:
            moved = mode["bytes_copied_per_run"]
            if mode["status"] != "measured":
                detail = f"Not measured: {html.escape(mode['skipped_reason'])}"
            elif moved:
                cost = mode["copy_ms_per_run"]
                detail = (f"Moves {human_bytes(mode['bytes_to_device_per_run'])} to the device and "
                          f"{human_bytes(mode['bytes_to_host_per_run'])} back per run"
                          + (f", about {cost:.3f} ms at the measured rates." if cost is not None else "."))
            else:
                detail = "Moves nothing between host and device memory in the loop."
            if mode["status"] == "measured" and mode.get("max_abs_diff") is not None:
                detail += f" Largest difference from the plain run's outputs: {mode['max_abs_diff']:.2g}."
            items.append(f"<li><b>{html.escape(mode['title'])}</b>: {html.escape(mode['explanation'])}"
                         f"<br><i>{detail}</i></li>")
        parts.append("<ol>" + "".join(items) + "</ol>")
        return "".join(parts)
