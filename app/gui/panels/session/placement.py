"""Node placement view (inside the Session tab): which provider takes each node of
the current model with the chosen providers, and a warning on silent CPU fallback."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget
from PySide6.QtCore import Qt
from app.core.session.jobs import PLACEMENT, PlacementParams


class PlacementView(QWidget):
    def __init__(self, panel):
        from app.gui.widgets.table import DataTable

        super().__init__()
        self.panel = panel
        self.result: dict | None = None
        self.button = QPushButton("Show placement")
        self.button.setToolTip("Create the session with the chosen providers and list which one runs each node.")
        self.button.clicked.connect(self.run)
        self.summary = QLabel("Choose providers in Settings, then show where each node runs.")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)   # it shows names from files
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.setStyleSheet("color: #c0392b; font-weight: bold")
        self.providers = DataTable(["Provider", "Nodes", "Share %", "Operators"])
        self.nodes = DataTable(["Node", "Operator", "Provider"])
        self.nodes.selectionModel().currentRowChanged.connect(lambda *_: self._node_chosen(show=False))
        self.nodes.doubleClicked.connect(lambda _: self._node_chosen(show=True))
        self.model_path = ""
        top = QHBoxLayout()
        top.addWidget(self.button)
        top.addWidget(self.summary, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.providers)
        split.addWidget(self.nodes)
        split.setSizes([120, 400])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.warnings)
        layout.addWidget(split, 1)

    def run(self) -> None:
        context = self.panel.context
        model = context.current_model()
        if model is None:
            context.show_error("Node placement", "Open a model first.")
            return
        config = self.panel._try_config()
        if config is None:
            return
        self.button.setEnabled(False)
        self.summary.setText(f"Creating a session for {model.label}…")

        def done(result: dict) -> None:
            self.button.setEnabled(True)
            self.model_path = model.path
            context.publish(PLACEMENT, model.path, result)     # the Graph tab's provider overlay
            self.show_result(result)

        context.jobs.start(f"Placement of {model.label}", PLACEMENT,
                          PlacementParams(path=model.path, session=config),
                          on_result=done, on_error=lambda _exc: self.button.setEnabled(True))

    def show_result(self, result: dict) -> None:
        from app.core.session.placement import display_name

        self.result = result
        source = "ONNX Runtime's graph assignment" if result["method"] == "assignment" else "a one-run profile"
        self.summary.setText(f"{result['summary']}   (from {source})")
        self.warnings.setText("\n".join(result["warnings"]))
        self.warnings.setVisible(bool(result["warnings"]))
        self.providers.set_rows([[display_name(p), info["nodes"], round(100 * info["share"], 1),
                                  ", ".join(f"{op} ×{n}" for op, n in info["op_types"].items())]
                                 for p, info in result["by_provider"].items()])
        self.nodes.set_rows([[n["name"], n["op_type"], display_name(n["provider"])] for n in result["nodes"]])

    def _node_chosen(self, show: bool) -> None:
        """A row names a node: the Graph tab centres on it (and comes forward on a double-click)."""
        index = self.nodes.currentIndex()
        if not self.model_path or not index.isValid():
            return
        name = self.nodes.proxy.index(index.row(), 0).data()
        self.panel.context.choose_node(self.model_path, name)
        if show:
            self.panel.context.show_node(self.model_path, name)
