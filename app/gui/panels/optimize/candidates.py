"""The buttons under the Optimize leaderboard that open the selected candidate (kept in the
shipped folder's candidates/) beside its source, in Compare, Drift or the Graph."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

TABS = ("Compare", "Drift", "Graph")


class CandidateActions(QWidget):
    def __init__(self, panel):
        super().__init__()
        self.panel = panel
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.buttons = {}
        for tab in TABS:
            button = QPushButton(f"Open in {tab}")
            button.clicked.connect(lambda _=False, t=tab: self.open_in(t))
            layout.addWidget(button)
            self.buttons[tab] = button
        layout.addStretch(1)
        self.refresh()

    def selected_row(self) -> dict | None:
        result = self.panel.result
        index = self.panel.table.current_row()
        if result is None or index is None or not 0 <= index < len(result["candidates"]):
            return None
        return result["candidates"][index]

    def refresh(self, *_) -> None:
        row = self.selected_row()
        openable = row is not None and (row["kind"] == "source" or bool(row.get("model")))
        why = ("" if openable else
               "Pick a candidate in the table." if row is None else
               "This candidate was not kept: tick 'Keep every candidate' before the search.")
        for button in self.buttons.values():
            button.setEnabled(openable)
            button.setToolTip(why)

    def open_in(self, tab: str) -> None:
        row = self.selected_row()
        if row is None:
            return
        context = self.panel.context
        source = context.model_at(self.panel.result["model"]) or context.open_model(self.panel.result["model"])
        if row["kind"] == "source":
            chosen = source
        else:
            chosen = context.model_at(row["model"]) or context.open_model(row["model"], parent=source,
                                                                          kind=row["kind"])
        context.select_models([source, chosen] if tab == "Compare" and chosen is not source else [chosen])
        context.bring_up(tab)
