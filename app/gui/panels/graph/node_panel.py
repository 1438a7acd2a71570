"""The chosen node: operator, domain, attributes, inputs and outputs with their inferred
dtypes and shapes, the initializers it reads (with their values' range), its cost, and
what the shown overlay says of it. A control-flow node offers to open or close its bodies."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QPushButton, QTextBrowser, QVBoxLayout, QWidget

from app.core.graph.cost import count_text
from app.core.formatting import human_bytes, shape_text


def _number(value) -> str:
    return "–" if value is None else f"{value:.6g}"


def _tensor_rows(values: list[dict]) -> str:
    rows = "".join(f"<tr><td>{escape(v['name'])}</td><td>{escape(str(v.get('dtype') or '?'))}</td>"
                   f"<td>{escape(shape_text(v['shape']) if v.get('shape') is not None else 'unknown')}</td></tr>"
                   for v in values)
    return f"<table cellspacing=0 cellpadding=2>{rows}</table>" if rows else "<p>none</p>"


def node_html(node: dict, details: dict | None, overlay_line: str = "") -> str:
    parts = [f"<h3>{escape(node['op_type'])}</h3><p><b>Name:</b> {escape(node['name'])}<br>"]
    if node["kind"] != "op":
        parts.append(f"<b>Graph {node['kind']}</b></p>")
        return "".join(parts) + (f"<p>{overlay_line}</p>" if overlay_line else "")
    if details is None:
        parts.append(f"<b>Domain:</b> {escape(node['domain'] or 'ai.onnx')}</p><p><i>Shapes, weights and cost "
                     "are still being worked out…</i></p>")
        return "".join(parts)
    parts.append(f"<b>Domain:</b> {escape(details['domain'])}</p>")
    if overlay_line:
        parts.append(f"<p>{overlay_line}</p>")
    attributes = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in details["attributes"].items())
    parts.append("<h4>Attributes</h4>" + (f"<table cellspacing=0 cellpadding=2>{attributes}</table>"
                                          if attributes else "<p>none</p>"))
    weights = {w["name"] for w in details["initializers"]}
    parts.append("<h4>Inputs</h4>" + _tensor_rows([v for v in details["inputs"] if v["name"] not in weights]))
    parts.append("<h4>Outputs</h4>" + _tensor_rows(details["outputs"]))
    if details["initializers"]:
        rows = "".join(
            f"<li><b>{escape(w['name'])}</b><br>{escape(w['dtype'])} {escape(shape_text(w['shape']))}, "
            f"{human_bytes(w['bytes']) if w.get('bytes') is not None else 'size unknown'}<br>"
            f"min {_number(w.get('min'))} · max {_number(w.get('max'))} · mean {_number(w.get('mean'))}</li>"
            for w in details["initializers"])
        parts.append(f"<h4>Initializers</h4><ul style='margin-left: -20px'>{rows}</ul>")
    cost = details["cost"]
    if cost["counted"]:
        parts.append(f"<h4>Cost</h4><p>{count_text(cost['macs'])}MACs · {count_text(cost['flops'])}FLOPs · "
                     f"{cost['parameters']:,} parameters · writes {human_bytes(cost['activation_bytes'])}</p>")
    else:
        parts.append(f"<h4>Cost</h4><p>not counted: {escape(cost['why_not'])}; "
                     f"{cost['parameters']:,} parameters</p>")
    return "".join(parts)


class NodePanel(QWidget):
    toggle_requested = Signal(str)        # a control-flow node's id: open or close its bodies

    def __init__(self):
        super().__init__()
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)
        self.toggle = QPushButton()
        self.toggle.hide()
        self.toggle.clicked.connect(lambda: self.toggle_requested.emit(self.node_id))
        self.node_id = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.text, 1)
        self.clear()

    def clear(self, text: str = "Click a node to see what it is and what it costs.") -> None:
        self.node_id = ""
        self.toggle.hide()
        self.text.setHtml(f"<p>{escape(text)}</p>")

    def show_node(self, node: dict, details: dict | None, expanded: bool, overlay_line: str = "") -> None:
        self.node_id = node["id"]
        self.text.setHtml(node_html(node, details, overlay_line))
        self.toggle.setVisible(bool(node["bodies"]))
        count = len(node["bodies"])
        self.toggle.setText(f"Close the {'bodies' if count > 1 else 'body'}" if expanded
                            else f"Open the {'bodies' if count > 1 else 'body'} ({count})")
