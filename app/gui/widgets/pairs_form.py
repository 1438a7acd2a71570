"""How a comparison measures: in how many pairs of fresh processes first, and how long it may
go on adding pairs while its interval cannot yet say faster, slower or the same — the
window's face of compare's --pairs and --max-seconds."""

from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QGroupBox, QSpinBox

from app.core.bench.jobs import COMPARE_PAIRS, CompareParams


class PairsForm(QGroupBox):
    def __init__(self, title: str = "Fresh processes"):
        super().__init__(title)
        form = QFormLayout(self)
        self.pairs = QSpinBox()
        self.pairs.setRange(1, 1000)
        self.pairs.setValue(COMPARE_PAIRS)
        self.pairs.setToolTip("Each model runs in this many fresh processes, taking turns; the interval comes "
                              "from the spread between them. The runs above are shared among them.")
        self.max_seconds = QDoubleSpinBox()
        self.max_seconds.setRange(1, 86400)
        self.max_seconds.setDecimals(0)
        self.max_seconds.setValue(CompareParams.__dataclass_fields__["max_seconds"].default)
        self.max_seconds.setSuffix(" s")
        self.max_seconds.setToolTip("While the interval cannot yet tell faster, slower or the same, more pairs "
                                    "run as long as one more fits in this time.")
        form.addRow("Pairs:", self.pairs)
        form.addRow("Run longer, up to:", self.max_seconds)

    def values(self) -> dict:
        return {"pairs": self.pairs.value(), "max_seconds": self.max_seconds.value()}

    def remembered(self) -> dict:
        return {"pairs": self.pairs, "max_seconds": self.max_seconds}
