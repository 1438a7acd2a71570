"""Diagnose tab: findings on why the current model is slow, with one-click fixes."""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSplitter, QTextBrowser

from app.core.formatting import duration_text
from app.gui.shell.job_control import JobControl, RunOf
from app.gui.shell.panel import Panel
from app.core.diagnose.jobs import DIAGNOSE, DiagnoseParams
from app.core.profile.jobs import PROFILE

SEVERITY_MARK = {"high": "●●●", "medium": "●●", "low": "●", "info": "○"}


class DiagnosePanel(Panel):
    title = "Diagnose"

    def build(self) -> None:
        from app.gui.widgets.run_caption import RunCaption

        self.result = None
        self.caption = RunCaption("No diagnosis yet.")
        self.control = JobControl(self.jobs, self.start, "Diagnose", caption=self.caption, parent=self)
        self.control.start_button.setToolTip("Profile the model with the Session tab's settings, time it, try fixed "
                                             "dimensions and spinning, and explain what slows it down.")
        self.layout_.addWidget(self.caption)
        top = QHBoxLayout()
        top.addLayout(self.control.buttons)
        top.addWidget(self.control.progress)
        top.addWidget(self.control.status, 1)
        self.layout_.addLayout(top)
        self.figures = QLabel()       # the diagnosed run's latency: greyed with the findings
        self.figures.setWordWrap(True)
        self.figures.setTextFormat(Qt.TextFormat.RichText)   # escaped: it names the trace file
        self.layout_.addWidget(self.figures)
        self.profile_source = "its own profile"
        self._build_findings()

    def _build_findings(self) -> None:
        """The findings, the selected one in full, and its setting to apply."""
        from app.gui.widgets.table import DataTable

        self.table = DataTable(["Severity", "Finding", "Id", "Likely cost"])
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._show_selected())
        self.details = QTextBrowser()
        self.apply_button = QPushButton("Apply this setting to the Session tab")
        self.apply_button.setEnabled(False)
        self.apply_button.clicked.connect(self.apply_selected)
        self.apply_reason = QLabel("Choose a finding: those with a session setting to change can apply it here.")
        self.apply_reason.setWordWrap(True)
        self.apply_reason.setTextFormat(Qt.TextFormat.PlainText)   # a setting may name a model's dimension
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.table)
        body.addWidget(self.details)
        body.setSizes([260, 300])
        self.layout_.addWidget(body, 1)
        self.caption.follow(self.figures, body)
        actions = QHBoxLayout()
        actions.addWidget(self.apply_button)
        actions.addWidget(self.apply_reason, 1)
        self.layout_.addLayout(actions)

    def model_changed(self, model) -> None:
        self.control.set_ready(model is not None and model.summary is not None)
        self.caption.model_changed(model)
        if self.job is None and self.result is None:
            self.control.say("Open a model to diagnose it." if model is None else
                                f"Ready: Diagnose profiles, times and tries settings on {model.label}.")

    def start(self) -> None:
        if self.model is None or self.job is not None:
            return
        config = self.context.session_config("Diagnose")
        if config is None:
            return
        params = DiagnoseParams(path=self.model.path, session=config)
        self.profile_source = "its own profile of this run"
        profile = self.context.latest(PROFILE, str(Path(self.model.path).resolve()))
        if profile and same_session(profile.get("session"), config.to_dict()) and Path(profile["trace"]).is_file():
            params.trace = profile["trace"]     # the Profile tab's shares, not a second profile's
            self.profile_source = f"the Profile tab's profile ({Path(profile['trace']).name})"
        self.control.run(f"Diagnose {self.model.label}", DIAGNOSE, params, self.show_result,
                         subject=RunOf(self.model.path, self.model.label),
                         message="Profiling, timing and experimenting…")

    def show_result(self, result: dict, run: RunOf) -> None:
        """A diagnosis of `run`'s model: its figures, its findings (the first selected)."""
        self.result = result
        self.context.report_inputs(run.path, result.get("inputs") or [])
        self.caption.show_run(run.path, run.label, result.get("inputs"), run.started)
        stats = result["evidence"]["latency_ms"]
        self.control.say(f"Done: {len(result['findings'])} finding(s).")
        load = result["evidence"].get("load") or {}
        busy = (f" <b>The machine was busy</b> (other processes used {load['other_cores']:.1f} cores): "
                "these figures are disturbed." if load.get("busy") else "")
        self.figures.setText(f"Latency p50 {duration_text(stats['p50'], 4)}, p99 {duration_text(stats['p99'], 4)} over "
                             f"{stats['runs']} runs on {escape(result['evidence']['cpu'], quote=False)}. Operator shares from "
                             f"{escape(self.profile_source, quote=False)}.{busy}")
        self.table.set_rows([[f"{SEVERITY_MARK.get(f['severity'], '')} {f['severity']}", f["title"], f["id"],
                              f["cost"]] for f in result["findings"]])
        if result["findings"]:
            self.table.selectRow(0)
        else:
            self.details.setHtml("<p>Nothing measured here points at a setting or a conversion to change.</p>")

    def selected(self) -> dict | None:
        if not self.result or not self.result["findings"]:
            return None
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        finding_id = self.table.proxy.index(index.row(), 2).data()
        title = self.table.proxy.index(index.row(), 1).data()
        return next((f for f in self.result["findings"] if f["id"] == finding_id and f["title"] == title), None)

    def _show_selected(self) -> None:
        finding = self.selected()
        self.apply_button.setEnabled(bool(finding and finding.get("setting")))
        self.apply_reason.setText(apply_reason(finding))
        if finding is None:
            return
        if finding.get("nodes") and self.caption.run:      # the Graph tab centres on the node it names first
            self.context.choose_node(self.caption.run.path, finding["nodes"][0])
        parts = [f"<h3>{escape(finding['title'])}</h3>", f"<p><b>Evidence:</b> {escape(finding['evidence'])}</p>"]
        if finding["cost"]:
            parts.append(f"<p><b>Likely cost:</b> {escape(finding['cost'])}</p>")
        parts.append(f"<p><b>Fix:</b> {escape(finding['fix'])}</p>")
        if finding.get("setting"):
            parts.append("<p><b>Setting:</b> " + escape(", ".join(f"{k} = {v}" for k, v in finding["setting"].items()))
                         + "</p>")
        self.details.setHtml("".join(parts))

    def apply_selected(self) -> None:
        finding = self.selected()
        if not finding or not finding.get("setting"):
            return
        from app.core.session.config import SessionConfig
        data = self.context.session.preset().to_dict()
        for key, value in finding["setting"].items():
            data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
        self.context.session.update(SessionConfig.from_dict(data))
        self.context.show_status(f"Applied: {finding['title']}", 5000)


def apply_reason(finding: dict | None) -> str:
    """Why "Apply this setting" is or is not enabled for `finding`."""
    if finding is None:
        return "Choose a finding: those with a session setting to change can apply it here."
    if finding.get("setting"):
        return "Puts " + ", ".join(f"{k} = {v}" for k, v in finding["setting"].items()) + " in the Session tab."
    return ("Nothing to apply: this finding's fix is not a session setting (see Fix above: a conversion, a change "
            "to the model, or a quieter machine).")


def same_session(profiled: dict | None, wanted: dict) -> bool:
    """Did a profile run with the session `wanted` (a preset)? Its record holds the providers
    ORT chose with their options, so providers are compared by name."""
    if not profiled:
        return False
    names = [p["name"] for p in wanted.get("providers", [])]
    ran = [p["name"] for p in profiled.get("providers", [])]
    rest = {k: v for k, v in profiled.items() if k != "providers"}
    return ran[:len(names)] == names and rest == {k: v for k, v in wanted.items() if k != "providers"}
