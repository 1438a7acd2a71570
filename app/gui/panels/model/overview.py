"""Overview tab: what is inside the current model."""

from __future__ import annotations

from dataclasses import replace
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from app.core.graph.cost import totals_text
from app.core.model.value_type import io_rows
from app.core.formatting import human_bytes
from app.gui.shell.panel import Panel
from app.gui.widgets.clipped import ElidedLabel, WrappedLabel
from app.gui.widgets.run_caption import WARN_STYLE


class OverviewPanel(Panel):
    title = "Overview"

    def build(self) -> None:
        from app.gui.widgets.chart_base import BarChart
        from app.gui.widgets.table import DataTable

        self.heading = QLabel()
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.heading.setWordWrap(True)
        self.layout_.addWidget(self.heading)

        facts_box = QGroupBox("Model")
        self.facts = QFormLayout(facts_box)
        self.facts.setVerticalSpacing(2)
        self.fact_labels: dict[str, QLabel] = {}
        for key in ("Format", "Size", "IR version", "Opsets", "Producer", "Nodes", "Parameters",
                    "Weights", "Cost", "External data", "Metadata"):
            # One line each: a long fact (metadata) is cut with "…" and shown whole as a tooltip; the
            # cost wraps, as what was not counted and why comes at its end.
            label = ElidedLabel("–") if key != "Cost" else WrappedLabel("–")
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setTextFormat(Qt.TextFormat.PlainText)
            self.fact_labels[key] = label
            self.facts.addRow(key + ":", label)
        # The model is counted on the input plan's defaults when it opens; this counts it on the
        # inputs and free dimensions the Session tab holds, the shapes the measuring tabs run.
        self.recount_button = QPushButton("Count on the Session tab's inputs")
        self.recount_button.setEnabled(False)
        self.recount_button.clicked.connect(self.recount)
        self.facts.addRow("", self.recount_button)

        self.io_table = DataTable(["", "Name", "Type", "Shape"])
        self.io_table.key_columns = ("Shape",)        # a long name gives up width first: at 1024 px Shape was cut
        io_box = QGroupBox("Inputs and outputs")
        QVBoxLayout(io_box).addWidget(self.io_table)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(facts_box)
        top.addWidget(io_box)
        top.setSizes([430, 570])          # the facts cut their long lines with "…"; the shapes need the room

        self.op_table = DataTable(["Operator", "Count", "Share %"])
        self.op_table.fixed_decimals = {"Share %": 1}
        self.op_table.key_columns = ("Share %",)      # a long operator name gives up width first
        self.op_chart = BarChart("Operators", placeholder="Open a model to see its operators.")
        ops = QSplitter(Qt.Orientation.Horizontal)
        ops.addWidget(self.op_table)
        ops.addWidget(self.op_chart)
        ops.setSizes([360, 540])          # the table keeps its three columns in view at 1024 wide

        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(top)
        body.addWidget(ops)
        body.setSizes([260, 400])
        self.layout_.addWidget(body, 1)

    def model_changed(self, model) -> None:
        from app.gui.widgets.chart_base import TOP_BARS

        if model is None:
            self.heading.setText("Open a model: drop a .onnx or .ort file on the window, or use File › Open.")
            self._clear()
            return
        if model.summary is None:
            self.heading.setText(f"<b>{escape(model.label, quote=False)}</b> — reading…")
            self._clear()
            return
        self.recount_button.setEnabled(model.summary.get("format") == "onnx")
        info = model.summary
        warnings = "".join(f"<br><span style='{WARN_STYLE}'>Warning: {escape(text, quote=False)}</span>"
                           for text in info.get("warnings", []))
        self.heading.setText(f"<b>{escape(model.label, quote=False)}</b>"
                             f"<br><small>{escape(info['path'], quote=False)}</small>{warnings}")
        size = human_bytes(info["size_bytes"])
        if info["external_data"]:
            size += f" (+ external data: {human_bytes(info['total_bytes'])} in all)"
        nodes = f"{info['node_count']:,}"
        if info["subgraph_count"]:
            nodes += f" ({info['top_level_node_count']:,} in the main graph, {info['subgraph_count']} subgraphs)"
        values = {
            "Format": "ONNX" if info["format"] == "onnx" else "ORT format",
            "Size": size,
            "IR version": str(info["ir_version"]),
            "Opsets": ", ".join(f"{d} {v}" for d, v in info["opsets"].items()),
            "Producer": f"{info['producer']} {info['producer_version']}".strip() or "–",
            "Nodes": nodes,
            "Parameters": f"{info['parameters']:,}",
            "Weights": human_bytes(info["initializer_bytes"]),
            "Cost": totals_text(info) if "macs" in info else "–",
            "External data": ", ".join(info["external_data_files"]) if info["external_data"] else "no",
            "Metadata": "; ".join(f"{k}: {v}" for k, v in info.get("metadata", {}).items()) or "–",
        }
        for key, text in values.items():
            self.fact_labels[key].setText(text)
        metadata = info.get("metadata", {})
        self.fact_labels["Metadata"].setToolTip("\n".join(f"{k}: {_short(str(v))}" for k, v in metadata.items()))
        self.io_table.set_rows(io_rows(info))
        total = max(1, info["node_count"])
        ops = list(info["op_counts"].items())
        self.op_table.set_rows([[op, n, 100 * n / total] for op, n in ops])
        self.op_chart.set_bars([op for op, _ in ops], [n for _, n in ops], value_name="count", top=TOP_BARS)

    def recount(self) -> None:
        """Count the current model's cost again on the Session tab's inputs."""
        from app.core.graph.jobs import SUMMARY, CostParams

        model = self.model
        if model is None:
            return
        config = self.context.session_config("Overview")
        if config is None:
            return
        inputs = replace(config.inputs, mode="zeros") if config.inputs.mode == "random" else config.inputs
        self.recount_button.setEnabled(False)
        self.fact_labels["Cost"].setText("counting on the Session tab's inputs…")

        def done(summary: dict) -> None:
            model.summary = summary
            if self.model is model:
                self.model_changed(model)

        def failed(_exc) -> None:
            if self.model is model:
                self.model_changed(model)

        self.jobs.start(f"Count {model.label}", SUMMARY, CostParams(path=model.path, inputs=inputs,
                                                                    free_dims=dict(config.free_dimension_overrides)),
                        on_result=done, on_error=failed)

    def _clear(self) -> None:
        self.recount_button.setEnabled(False)
        self.fact_labels["Metadata"].setToolTip("")
        for label in self.fact_labels.values():
            label.setText("–")
        self.io_table.set_rows([])
        self.op_table.set_rows([])
        self.op_chart.set_bars([], [])


def _short(text: str, limit: int = 300) -> str:
    """A metadata value for a tooltip: some models keep whole vocabularies there."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} characters)"
