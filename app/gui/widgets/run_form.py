"""The run settings a benchmark takes (warm-up, runs or duration, concurrency), shared by
the live run and the sweep."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QSpinBox

from app.core.bench.bench import RunSettings
from app.core.units import duration_text

SIDE_WIDTH = 280          # px: the settings column beside a comparison's or a sweep's results, at most


def ms_text(value) -> str:
    """A figure held in ms, in the unit its size reads best in, to 4 significant digits
    (trailing zeros kept, so figures side by side read alike)."""
    return duration_text(value, 4, trim=False)


class RunSettingsForm(QGroupBox):
    """Warm-up, iterations or duration, and concurrency — shared by the live run and the sweep."""

    def __init__(self, title: str = "Run"):
        super().__init__(title)
        form = QFormLayout(self)
        self.warmup = QSpinBox()
        self.warmup.setRange(0, 1_000_000)
        self.warmup.setValue(10)
        self.warmup.setToolTip("Runs before measuring: caches, lazy allocations and provider start-up settle here.")
        self.stop_by = QComboBox()
        self.stop_by.addItems(["a number of runs", "a duration"])
        self.iterations = QSpinBox()
        self.iterations.setRange(1, 100_000_000)
        self.iterations.setValue(200)
        self.duration = QDoubleSpinBox()
        self.duration.setRange(0.1, 86400)
        self.duration.setValue(10)
        self.duration.setSuffix(" s")
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 256)
        self.concurrency.setToolTip("Threads sharing one session, each running back to back: shows throughput "
                                    "under load (latency usually rises).")
        form.addRow("Warm-up runs:", self.warmup)
        form.addRow("Stop after:", self.stop_by)
        form.addRow("Runs:", self.iterations)
        form.addRow("Duration:", self.duration)
        form.addRow("Concurrency:", self.concurrency)
        self.stop_by.currentIndexChanged.connect(self._stop_by_changed)
        self._stop_by_changed()

    def _stop_by_changed(self) -> None:
        by_time = self.stop_by.currentIndex() == 1
        self.iterations.setEnabled(not by_time)
        self.duration.setEnabled(by_time)

    def settings(self) -> RunSettings:
        return RunSettings(warmup=self.warmup.value(), iterations=self.iterations.value(),
                           duration_s=self.duration.value() if self.stop_by.currentIndex() == 1 else None,
                           concurrency=self.concurrency.value())

    def set_settings(self, run: dict) -> None:
        self.warmup.setValue(run.get("warmup", 10))
        self.iterations.setValue(run.get("iterations", 200))
        self.stop_by.setCurrentIndex(1 if run.get("duration_s") else 0)
        if run.get("duration_s"):
            self.duration.setValue(run["duration_s"])
        self.concurrency.setValue(run.get("concurrency", 1))

    def remembered(self, prefix: str = "") -> dict:
        """The form's editors by a stable name, the choice that enables the others first."""
        return {f"{prefix}{name}": getattr(self, name)
                for name in ("stop_by", "warmup", "iterations", "duration", "concurrency")}
