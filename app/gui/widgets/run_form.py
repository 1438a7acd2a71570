"""The run settings a benchmark takes (warm-up, runs or duration, concurrency), shared by
the live run and the sweep."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QSpinBox

from app.core.measure.runs import RunSettings
from app.core.session.fields import BIG
from app.core.formatting import duration_text

SIDE_WIDTH = 280          # px: the settings column beside a comparison's or a sweep's results, at most


def ms_text(value) -> str:
    """A figure held in ms, in the unit its size reads best in, to 4 significant digits
    (trailing zeros kept, so figures side by side read alike)."""
    return duration_text(value, 4, trim=False)


#: the duration the form offers when "a duration" is picked (RunSettings has none: it counts runs by default)
OFFERED_DURATION_S = 10.0


def _field(name: str) -> dataclasses.Field:
    return next(field for field in dataclasses.fields(RunSettings) if field.name == name)


def _label(name: str) -> str:
    return f"{_field(name).metadata['label']}:"


def _spin(name: str, box):
    """A spin box with the range, default and tooltip of RunSettings' field `name`."""
    field = _field(name)
    widget = box()
    maximum = field.metadata["maximum"]
    if isinstance(widget, QDoubleSpinBox):
        widget.setDecimals(3)            # the shortest duration, 1 ms, shows
        widget.setRange(field.metadata["minimum"], maximum)
    else:
        widget.setRange(field.metadata["minimum"], min(BIG, maximum if maximum is not None else BIG))
    if field.default is not None:
        widget.setValue(field.default)
    widget.setToolTip(field.metadata["help"])
    return widget


class RunSettingsForm(QGroupBox):
    """Warm-up, iterations or duration, and concurrency — shared by the live run and the sweep;
    ranges, defaults and tooltips are RunSettings' (the command line's flags are made from it too)."""

    def __init__(self, title: str = "Run"):
        super().__init__(title)
        form = QFormLayout(self)
        self.warmup = _spin("warmup", QSpinBox)
        self.stop_by = QComboBox()
        self.stop_by.addItems(["a number of runs", "a duration"])
        self.iterations = _spin("iterations", QSpinBox)
        self.duration = _spin("duration_s", QDoubleSpinBox)
        self.duration.setValue(OFFERED_DURATION_S)
        self.duration.setSuffix(" s")
        self.concurrency = _spin("concurrency", QSpinBox)
        form.addRow(_label("warmup"), self.warmup)
        form.addRow("Stop after:", self.stop_by)
        form.addRow(_label("iterations"), self.iterations)
        form.addRow(_label("duration_s"), self.duration)
        form.addRow(_label("concurrency"), self.concurrency)
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

    def set_settings(self, run: RunSettings) -> None:
        self.warmup.setValue(run.warmup)
        self.iterations.setValue(run.iterations)
        self.stop_by.setCurrentIndex(1 if run.duration_s else 0)
        if run.duration_s:
            self.duration.setValue(run.duration_s)
        self.concurrency.setValue(run.concurrency)

    def remembered(self, prefix: str = "") -> dict:
        """The form's editors by a stable name, the choice that enables the others first."""
        return {f"{prefix}{name}": getattr(self, name)
                for name in ("stop_by", "warmup", "iterations", "duration", "concurrency")}
