"""Profile tab: run the current model with ONNX Runtime's profiler, or open a trace (also by
dropping a .json on the window), and read it per operator type, node, provider and run, and
on a timeline; compare any two profiles of the session (before/after an optimisation).

Reading a trace is a job in a child process, like running a model: decoding hundreds of MB
holds Python's interpreter lock for seconds and needs memory in proportion to the events,
and the window's process should pay for neither. Only the totals and compact columns for
the timeline come back."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QSpinBox,
                               QTabWidget)

from app.gui.shell.job_control import JobControl, RunOf
from app.gui.shell.panel import Panel
from app.core.profile.jobs import COPY_TRACE, PROFILE, READ_TRACE, CopyParams, ProfileParams, TraceParams
from app.gui.widgets.plain_text import plain

TRACE_FILTER = "Profiling traces (*.json);;All files (*)"
DEFAULT_RUNS = 10


class ProfilePanel(Panel):
    title = "Profile"

    def __init__(self, context):
        super().__init__(context)
        self.profiles: list[tuple[str, dict]] = []

    def build(self) -> None:
        from app.gui.panels.profile.views import (CompareView, NodesView, OperatorsView, ProvidersView, RunsView,
                                           TimelineTab)
        from app.gui.widgets.run_caption import RunCaption

        self.caption = RunCaption()
        self.control = JobControl(self.jobs, self.profile_model, "Profile current model", caption=self.caption,
                                  parent=self)
        self.runs = QSpinBox()
        self.runs.setRange(1, 100_000)
        self.runs.setValue(DEFAULT_RUNS)
        self.runs.setSuffix(" runs")
        self.runs.setToolTip("Profiled runs, the first (warm-up) one included")
        open_button = QPushButton("Open trace…")
        open_button.clicked.connect(self.open_dialog)
        self.export_button = QPushButton("Export for Perfetto…")
        self.export_button.setToolTip("Save the trace as ONNX Runtime wrote it, for ui.perfetto.dev or "
                                      "chrome://tracing")
        self.export_button.clicked.connect(self.export_dialog)
        # short words and a narrower list: this row set the whole window's least width (1,107 px)
        self.include_first = QCheckBox("Count the warm-up run")
        self.include_first.setToolTip("Include the first (warm-up) run in the averages")
        self.include_first.toggled.connect(lambda _: self.show_current())
        self.shown = QComboBox()
        self.shown.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.shown.setMinimumContentsLength(18)
        self.shown.currentIndexChanged.connect(lambda _: self.show_current())
        bar = QHBoxLayout()       # two rows, so the tab fits a 1024-pixel window beside the model list
        bar.addLayout(self.control.buttons)
        for widget in (self.runs, open_button, self.export_button):
            bar.addWidget(widget)
        bar.addStretch(1)
        showing = QHBoxLayout()
        showing.addWidget(QLabel("Showing:"))
        showing.addWidget(self.shown, 1)
        showing.addWidget(self.include_first)
        self.layout_.addLayout(bar)
        self.layout_.addWidget(self.control.progress)
        self.layout_.addWidget(self.control.status)
        self.layout_.addLayout(showing)
        self.layout_.addWidget(self.caption)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.warning = QLabel()
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color: #c0392b;")
        self.warning.hide()
        self.layout_.addWidget(self.heading)
        self.layout_.addWidget(self.warning)

        self.operators, self.nodes, self.providers = OperatorsView(), NodesView(), ProvidersView()
        self.runs_view, self.timeline, self.compare = RunsView(), TimelineTab(), CompareView()
        self.views = QTabWidget()
        for view, title in ((self.operators, "Operators"), (self.nodes, "Nodes"), (self.providers, "Providers"),
                            (self.runs_view, "Runs"), (self.timeline, "Timeline"), (self.compare, "Compare")):
            self.views.addTab(view, title)
        self.layout_.addWidget(self.views, 1)
        self.caption.follow(self.heading, self.views)
        self.compare.before.currentIndexChanged.connect(lambda _: self.update_compare())
        self.compare.after.currentIndexChanged.connect(lambda _: self.update_compare())
        self.compare.measure_button.clicked.connect(self.measure_compare)
        self.nodes.table.selectionModel().currentRowChanged.connect(lambda *_: self._node_chosen(show=False))
        self.nodes.table.doubleClicked.connect(lambda _: self._node_chosen(show=True))
        self._list_profiles()     # some may have arrived before the tab was first shown

    def remembered(self) -> dict:
        return {"runs": self.runs, "include_first": self.include_first}

    def model_changed(self, model) -> None:
        ready = model is not None and model.summary is not None
        self.control.set_ready(ready)
        # The name goes in the tooltip: a long file name would make the button (and the tab) too wide.
        self.control.start_button.setText("Profile" if model is not None else "Profile current model")
        self.control.start_button.setToolTip(plain(f"Run {model.label} with the Session tab's settings and the profiler on")
                                       if model is not None else "Open a model to profile it")
        self.caption.model_changed(model)
        if not self.profiles:
            self.heading.setText("Profile the current model, or open a trace .json written by ONNX Runtime "
                                 "(dropping it on the window works too)." if ready or model is None
                                 else f"{model.label}: reading…")

    # starting work -----------------------------------------------------------------------------
    def profile_model(self) -> None:
        model = self.context.current_model()
        if model is None:
            return
        config = self.context.session.config()
        providers = ", ".join(p.name.replace("ExecutionProvider", "") for p in config.providers)
        label = f"{model.label} · {providers} · {time.strftime('%H:%M:%S')}"
        params = ProfileParams(model=model.path, session=config, runs=self.runs.value(), with_timeline=True)
        self.control.run(f"Profile {model.label}", PROFILE, params,
                         lambda info, run: self._profiled(run.path, label, info),
                         subject=RunOf(model.path, model.label), message="Profiling…")

    def _profiled(self, path: str, label: str, info: dict) -> None:
        info.setdefault("created", time.time())
        info["model_path"] = path               # the path as the model list has it
        self.context.report_inputs(path, info.get("inputs") or [])
        self.add_profile(label, info)
        self.control.say(f"Profiled {info['runs']} run(s): shown as {label}.")

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a profiling trace", self.context.settings.last_open_dir,
                                              TRACE_FILTER)
        if path:
            self.open_trace(path)

    def open_dropped_trace(self, path: str) -> None:
        self.context.show_tab(self)
        self.ensure_built()
        self.open_trace(path)

    def open_trace(self, path: str) -> None:
        name = Path(path).name
        self.jobs.start(f"Read trace {name}", READ_TRACE,
                        TraceParams(trace=str(path), with_timeline=True),
                        on_result=lambda info: self.add_profile(name, info))

    def export_dialog(self) -> None:
        info = self.current()
        if info is None:
            return
        target, _ = QFileDialog.getSaveFileName(self, "Export the trace for Perfetto or chrome://tracing",
                                                Path(info["trace"]).name, "Chrome trace JSON (*.json)")
        if target:
            self.export_trace(target)

    def export_trace(self, target: str):
        """Copy the shown profile's trace, as ORT wrote it, to `target` (the dialog asked about replacing)."""
        info = self.current()
        if info is None or Path(target).resolve() == Path(info["trace"]).resolve():
            return None
        return self.jobs.start(f"Export {Path(target).name}", COPY_TRACE,
                               CopyParams(source=info["trace"], target=target),
                               on_result=lambda done: self.context.show_status(
                                   f"Trace saved: {done['path']}", 8000))

    # showing -----------------------------------------------------------------------------------
    def add_profile(self, label: str, info: dict) -> None:
        self.profiles.append((label, info))
        path = info.get("model_path") or info.get("model")
        if path:                                 # the Graph tab draws the newest profile of each model
            self.context.publish(PROFILE, str(Path(path).resolve()), info)
        if self.built:
            self._list_profiles()

    def _list_profiles(self) -> None:
        """Offer every profile and show the newest; compare it with the one before."""
        labels = [name for name, _ in self.profiles]
        self.shown.blockSignals(True)
        self.shown.clear()
        self.shown.addItems(labels)
        self.shown.setCurrentIndex(len(labels) - 1)
        self.shown.blockSignals(False)
        self.show_current()
        self.compare.set_choices(labels)
        self.update_compare()

    def current(self) -> dict | None:
        index = self.shown.currentIndex() if self.built else -1
        return self.profiles[index][1] if 0 <= index < len(self.profiles) else None

    def show_current(self) -> None:
        info = self.current()
        self.export_button.setEnabled(info is not None)
        self.views.setEnabled(info is not None)
        if info is None:
            return
        if info.get("model"):
            self.caption.show_run(info.get("model_path", info["model"]), Path(info["model"]).name,
                                  info.get("inputs"), info.get("created"), load=info.get("load"))
            self.caption.model_changed(self.context.current_model())
        else:
            self.caption.clear()
            self.caption.setText("A trace opened from a file: it does not record the model's inputs.")
        include = self.include_first.isChecked()
        averaged = ("all runs" if include or not info["warmup_excluded"]
                    else "the steady runs (the first, warm-up run left out)")
        source = f"{info['model']}<br>trace: {info['trace']}" if info.get("model") else info["trace"]
        self.heading.setText(
            f"<b>{self.profiles[self.shown.currentIndex()][0]}</b><br><small>{source}</small><br>"
            f"{info['runs']} run(s) · {info['node_events']:,} node events · total node time "
            f"<b>{info['total_node_us'] / 1000:,.3f} ms</b> — every % is a share of this total; "
            f"averages are over {averaged}. Node time is not a run's latency: it adds up every node's own time, "
            "those that ran side by side on several threads too, measured with profiling on (which slows each "
            "node); a benchmark's p50 is a run's wall time with profiling off.")
        self.warning.setText("<br>".join(info["warnings"]))
        self.warning.setVisible(bool(info["warnings"]))
        for view in (self.operators, self.nodes, self.providers, self.runs_view, self.timeline):
            view.show_profile(info, include)

    def _node_chosen(self, show: bool) -> None:
        """A row of the Nodes view names a node: the Graph tab centres on it (and comes forward on a double-click)."""
        info, index = self.current(), self.nodes.table.currentIndex()
        path = info and (info.get("model_path") or info.get("model"))
        if not path or not index.isValid():
            return
        name = self.nodes.table.proxy.index(index.row(), 1).data()
        self.context.choose_node(str(Path(path).resolve()), name)
        if show:
            self.context.show_node(str(Path(path).resolve()), name)

    def update_compare(self) -> None:
        from app.core.profile.diff import diff_profiles
        from app.core.profile.origins import model_of

        before, after = self.compare.before.currentIndex(), self.compare.after.currentIndex()
        if len(self.profiles) < 2 or before < 0 or after < 0:
            self.compare.show_diff(None)
            return
        # an opened trace names no model; ORTune noted it for the traces it recorded
        one, two = ({**info, "model": info.get("model") or model_of(info["trace"])}
                    for info in (self.profiles[before][1], self.profiles[after][1]))
        self.compare.show_diff(diff_profiles(one, two))

    def measure_compare(self) -> None:
        """Time the two profiles' models in alternation (Compare's job) and show it beside the profile."""
        from app.core.bench.jobs import COMPARE, CompareParams
        from app.core.profile.diff import with_measurement

        diff = self.compare.result
        if diff is None:
            return
        models = diff["models"]
        self.compare.measure_button.setEnabled(False)

        def on_result(compare: dict) -> None:
            if self.compare.result is diff:      # still the same pair
                self.compare.show_diff(with_measurement(diff, compare))

        self.context.jobs.start(
            "Time the two profiled models", COMPARE,
            CompareParams(models=[{"path": models["before"], "label": "before"},
                                  {"path": models["after"], "label": "after"}],
                          session=self.context.session.config(), record=False),
            on_result=on_result, on_error=lambda _error: self.compare.measure_button.setEnabled(True))
