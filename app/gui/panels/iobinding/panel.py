"""IO Binding tab: the current model fed five ways on one provider, and where the copies go.

Its inputs are the Session tab's (one plan for every tab): the tab shows the sizes that
plan gives and runs with them. On the CPU no mode copies anything, so a CPU result is one
compact table under a short word on what the tab shows on a GPU."""

from __future__ import annotations

from app.core.verdict import verdict_words
import html
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSpinBox, QSplitter, QTextBrowser

from app.core.bench.compare import interval_text
from app.core.formatting import diff_text, ratio_text
from app.core.formatting import human_bytes
from app.gui.shell.job_control import JobControl, RunOf
from app.gui.shell.panel import Panel
from app.core.iobinding.jobs import IOBINDING, IOBindingParams

#: (short name, label, ORT provider) in the order the combo lists them
PROVIDERS = [("cpu", "CPU", "CPUExecutionProvider"), ("cuda", "CUDA", "CUDAExecutionProvider"),
             ("dml", "DirectML", "DmlExecutionProvider")]
#: the speed-up over the plain run with its interval and verdict, as Compare shows a speed-up
SPEEDUP_COLUMNS = ["× plain (p50)", "95 % interval", "Verdict"]
COLUMNS = ["Mode", "Mean ms", "p50 ms", "p99 ms", "Moved MB/run", "Copy ms", *SPEEDUP_COLUMNS, "Max diff"]
CPU_COLUMNS = ["Mode", "p50 ms", "p99 ms", *SPEEDUP_COLUMNS, "Max diff"]
ON_A_GPU = ("On a GPU this tab shows what moving inputs and outputs between host and device memory costs per "
            "run, and how much of it binding them to device buffers, keeping them on the device and replaying "
            "the run as a CUDA graph save. ")


class IOBindingPanel(Panel):
    title = "IO Binding"

    def build(self) -> None:
        from app.gui.widgets.run_caption import RunCaption

        self.results: dict[str, dict] = {}
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.heading.setWordWrap(True)
        self.layout_.addWidget(self.heading)

        controls = QHBoxLayout()
        self.provider_combo = QComboBox()
        for short, label, _ in PROVIDERS:
            self.provider_combo.addItem(label, short)
        self.provider_combo.currentIndexChanged.connect(lambda _: self._update_provider_note())
        self.inputs_label = QLabel()
        self.inputs_label.setTextFormat(Qt.TextFormat.RichText)     # names escaped, sizes in italics
        self.inputs_label.setToolTip("The Session tab's inputs, which every tab runs with: change the sizes in its "
                                     "Inputs table. In italics: sizes nobody set, chosen by the plan (shown: what "
                                     "it chose last or would choose).")
        self.iterations = QSpinBox(minimum=1, maximum=1_000_000, value=100)
        self.warmup = QSpinBox(minimum=0, maximum=100_000, value=10)
        self.caption = RunCaption("No run of this model yet.")
        self.control = JobControl(self.jobs, self.start, "Run", caption=self.caption, parent=self)
        for widget in (QLabel("Provider:"), self.provider_combo, QLabel("Runs per mode:"), self.iterations,
                       QLabel("Warm-up:"), self.warmup):
            controls.addWidget(widget)
        controls.addStretch(1)
        controls.addLayout(self.control.buttons)
        self.layout_.addLayout(controls)
        self.layout_.addWidget(self.inputs_label)

        self.provider_note = QLabel()
        self.provider_note.setTextFormat(Qt.TextFormat.RichText)    # escaped text: never shown as "&quot;"
        self.provider_note.setWordWrap(True)
        self.layout_.addWidget(self.provider_note)
        self.layout_.addWidget(self.control.progress)
        self.layout_.addWidget(self.control.status)
        self.layout_.addWidget(self.caption)

        self.layout_.addWidget(self._build_results(), 1)
        self.context.providers_ready.connect(self.set_providers)
        self.set_providers(self.context.providers_info)
        state, listener = self.context.session, self._session_changed
        state.subscribe(listener)
        self.destroyed.connect(lambda *_: state.unsubscribe(listener))
        self.context.inputs_planned.connect(lambda *_: self._show_inputs())

    def _build_results(self) -> QSplitter:
        """Each mode's figures as a table and a chart, over what each mode does and costs."""
        from app.gui.widgets.chart_base import BarChart
        from app.gui.widgets.table import DataTable

        self.cpu_note = QLabel()
        self.cpu_note.setTextFormat(Qt.TextFormat.PlainText)     # escaped text showed "machine&#x27;s"
        self.cpu_note.setWordWrap(True)
        self.cpu_note.hide()
        self.layout_.addWidget(self.cpu_note)
        self.table = DataTable(COLUMNS)
        self.table.decimals = 3
        self.table.column_formats = {SPEEDUP_COLUMNS[0]: ratio_text, "Max diff": diff_text}
        self.table.key_columns = ("Verdict",)
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
        self.caption.follow(self.cpu_note, body)
        return body

    # providers ---------------------------------------------------------------
    def set_providers(self, info: dict | None) -> None:
        """Enable the providers that really start here; the others say why not."""
        found = {p["name"]: p for p in (info or {}).get("providers", [])}
        self.checking = info is None
        self.unusable: dict[str, str] = {}
        self.usable_gpus: list[str] = []
        for index, (_, label, name) in enumerate(PROVIDERS):
            if name == "CPUExecutionProvider":
                usable, reason = True, ""
            elif info is None:
                usable, reason = False, "checking which providers start here…"
            else:
                entry = found.get(name)
                usable = bool(entry and entry["available"])
                reason = "" if usable else (entry["reason"] if entry else "not part of this ONNX Runtime build")
            if usable and name != "CPUExecutionProvider":
                self.usable_gpus.append(label)
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

    # the current model and its inputs ----------------------------------------
    def remembered(self) -> dict:
        return {"provider": self.provider_combo, "iterations": self.iterations, "warmup": self.warmup}

    def model_changed(self, model) -> None:
        self._show_inputs()
        self.control.set_ready(model is not None and model.summary is not None)
        if model is None:
            self.heading.setText("Open a model to compare plain runs with IO binding and device tensors.")
        else:
            self.heading.setText(f"<b>{html.escape(model.label)}</b> — a plain run against IO binding with "
                                 "inputs and outputs kept on the device, measured in a separate process.")
        result = self.results.get(model.path) if model is not None else None
        self.show_result(result)

    def _session_changed(self, _state, changed) -> None:
        if any(name.startswith("inputs.") for name in changed):
            self._show_inputs()

    def _show_inputs(self) -> None:
        """The sizes the Session tab's plan gives the current model's inputs."""
        from app.core.session.input_plan import known_shape, looks_like_audio

        model = self.context.current_model()
        if model is None or model.summary is None:
            self.inputs_label.setText("")
            return
        state = self.context.session
        dims, shapes = state.get("inputs.dims"), state.get("inputs.shapes")
        planned = {row["name"]: row["shape"] for row in self.context.last_plan(model.path) or []}
        parts, inputs = [], model.summary["inputs"]
        for item in inputs:
            known = known_shape(item, dims, shapes, planned.get(item["name"]), model.summary.get("metadata"),
                                looks_like_audio(inputs))
            sizes = "×".join(f"<i>{value}</i>" if origin == "plan" else str(value) for value, origin in known)
            parts.append(f"{html.escape(item['name'])} {sizes or '(shape chosen when it runs)'}")
        self.inputs_label.setText("Inputs, from the Session tab: " + ", ".join(parts))

    # running -------------------------------------------------------------------
    def start(self) -> None:
        model = self.context.current_model()
        if model is None or self.job is not None:
            return
        config = self.context.session_config("IO Binding")
        if config is None:
            return
        provider = self.provider_combo.currentData()
        params = IOBindingParams(path=model.path, session=config, provider=provider,
                                 iterations=self.iterations.value(), warmup=self.warmup.value())
        self.control.run(f"IO binding: {model.label} on {self.provider_combo.currentText()}", IOBINDING, params,
                         self.keep_result, subject=RunOf(model.path, model.label))

    def keep_result(self, result: dict, run: RunOf) -> None:
        """Kept for `run`'s model, and shown while it is the current one."""
        model = self.context.current_model()
        result.setdefault("created", time.time())
        result["model_path"] = run.path
        self.results[run.path] = result
        self.context.report_inputs(run.path, result["inputs"])
        self.show_result(self.results.get(model.path) if model is not None else None)

    # showing -------------------------------------------------------------------
    def show_result(self, result: dict | None) -> None:
        if self.job is None:
            if result is None:
                self.caption.clear()
            else:
                self.caption.show_run(result["model_path"], Path(result["model"]).name, result["inputs"],
                                      result["created"], load=result.get("load"))
        on_cpu = result is not None and result["device"] == "cpu"
        self.cpu_note.setVisible(on_cpu)
        self.chart.setVisible(not on_cpu)
        self.explanation.setVisible(not on_cpu)
        if result is None:
            self.table.set_rows([], COLUMNS)
            self.chart.set_bars([], [])
            self.explanation.setHtml("")
            return
        if on_cpu:
            self._show_cpu(result)
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
                         mode["copy_ms_per_run"], *speedup_cells(index, mode),
                         None if diff is None else f"{diff:.2g}"])
            if stats:
                labels.append(label)
                values.append(stats["p50"])
                brushes.append(colors[index % len(colors)])
        self.table.set_rows(rows, COLUMNS)
        self.chart.set_bars(labels, values, value_name="p50 ms", brushes=brushes)
        self.explanation.setHtml(self.explanation_html(result))

    def _show_cpu(self, result: dict) -> None:
        """A CPU run: the measured modes in one compact table, and what the tab would show on a GPU."""
        measured = [(index, mode) for index, mode in enumerate(result["modes"]) if mode["latency_ms"]]
        self.table.set_rows([[f"{index + 1}. {mode['title']}", mode["latency_ms"]["p50"], mode["latency_ms"]["p99"],
                              *speedup_cells(index, mode),
                              None if mode["max_abs_diff"] is None else f"{mode['max_abs_diff']:.2g}"]
                             for index, mode in measured], CPU_COLUMNS)
        self.cpu_note.setText(self.cpu_text(result, self.usable_gpus))

    @staticmethod
    def cpu_text(result: dict, gpus: list[str]) -> str:
        where = (f"Pick {' or '.join(gpus)} above to see that here. " if gpus else
                 "This machine has no GPU that ONNX Runtime can use, so that cannot be shown here. ")
        skipped = [mode["title"] for mode in result["modes"] if not mode["latency_ms"]]
        return (
            ON_A_GPU + where + "On the CPU, device memory is host memory: no mode copies anything, so the modes "
            "below do the same work, and what differs between them is bookkeeping (microseconds per run) or the "
            "machine's noise"
            + (f" ({', '.join(skipped)}: GPU only)" if skipped else "") + f". {result['iterations']} runs per "
            f"mode in alternating rounds, with {human_bytes(result['input_bytes'])} of inputs per run. "
            + faster_text(result))

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
        for index, mode in enumerate(result["modes"]):
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
            if mode["status"] == "measured" and index:
                detail += " " + speed_sentence(mode)
            if mode["status"] == "measured" and mode.get("max_abs_diff") is not None:
                detail += f" Largest difference from the plain run's outputs: {mode['max_abs_diff']:.2g}."
            items.append(f"<li><b>{html.escape(mode['title'])}</b>: {html.escape(mode['explanation'])}"
                         f"<br><i>{detail}</i></li>")
        parts.append("<ol>" + "".join(items) + "</ol>")
        return "".join(parts)


def speedup_cells(index: int, mode: dict) -> list:
    """A mode's speed-up over the plain run, its 95 % interval and verdict (the plain run: the reference)."""
    if index == 0:
        return [1.0, "", "reference"]
    if mode.get("speedup_ci") is None:
        return [None, "not measured", ""]
    return [mode["speedup_vs_plain"], interval_text(mode["speedup_ci"]), verdict_words(mode["verdict"])]


def faster_text(result: dict) -> str:
    """Which modes the verdicts find faster than the plain run: none is called a gain otherwise."""
    faster = [mode["title"] for mode in result["modes"][1:] if mode.get("verdict") == "faster"]
    if faster:
        return f"Measurably faster than the plain run (the verdict column): {', '.join(faster)}."
    return "No mode is measurably faster than the plain run (the verdict column)."


def speed_sentence(mode: dict) -> str:
    """What the mode's verdict says about its speed: a gain only when it is measurably faster."""
    if mode.get("speedup_ci") is None:
        return "Its speed against the plain run was not measured."
    figure = f"{ratio_text(mode['speedup_vs_plain'])} (95 % interval {interval_text(mode['speedup_ci'])})"
    if mode["verdict"] == "faster":
        return f"Faster than the plain run: {figure}."
    if mode["verdict"] == "slower":
        return f"Slower than the plain run: {figure}."
    return f"No measurable difference from the plain run: {figure}."
