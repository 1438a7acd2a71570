"""The Jobs dock: running and finished jobs with progress, ETA, Cancel and errors.
A failed job is drawn in the failure colour, its bar full and labelled "failed"."""

from __future__ import annotations

import time

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QProgressBar, QPushButton, QTableWidget,
                               QTableWidgetItem)

from app.gui.widgets.plain_text import plain
from app.gui.widgets.theme import plot_colors

COLUMNS = ["Job", "State", "Progress", "Time", "ETA", "", "Message"]
#: rows the dock always has room for
MIN_ROWS = 4


class JobsTable(QTableWidget):
    def __init__(self, manager, parent=None):
        super().__init__(0, len(COLUMNS), parent)
        self.manager = manager
        self.setHorizontalHeaderLabels(COLUMNS)
        self.verticalHeader().setVisible(False)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.horizontalHeader().setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.setColumnWidth(0, 240)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)   # the message column gives way
        self.setWordWrap(False)                 # one line per job: a long title is cut, its tooltip has it all
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.rows: dict[int, int] = {}
        self.jobs: dict[int, object] = {}
        manager.job_added.connect(self.add_job)
        manager.job_changed.connect(self.update_job)
        manager.job_finished.connect(self.update_job)
        manager.job_released.connect(self.remove_job)
        self.timer = QTimer(self)
        self.timer.setInterval(500)
        self.timer.timeout.connect(self._tick)
        self.timer.start()
        for job in manager.jobs:
            self.add_job(job)

    def add_job(self, job) -> None:
        if job.id in self.rows:
            return
        row = 0
        self.insertRow(row)
        self.rows = {jid: r + 1 for jid, r in self.rows.items()}
        self.rows[job.id] = row
        self.jobs[job.id] = job
        title = QTableWidgetItem(job.title)
        title.setToolTip(plain(job.title))             # a long title is cut to the column
        self.setItem(row, 0, title)
        bar = QProgressBar()
        bar.setRange(0, 1000)
        bar.setTextVisible(True)
        bar.setMaximumHeight(self.verticalHeader().defaultSectionSize() - 4)
        self.setCellWidget(row, 2, bar)
        button = QPushButton("Cancel")
        button.setMaximumHeight(self.verticalHeader().defaultSectionSize())
        button.clicked.connect(job.cancel)
        self.setCellWidget(row, 5, button)
        for column in (1, 3, 4, 6):
            self.setItem(row, column, QTableWidgetItem(""))
        self.update_job(job)

    def remove_job(self, job) -> None:
        row = self.rows.pop(job.id, None)
        if row is None:
            return
        del self.jobs[job.id]
        self.removeRow(row)
        self.rows = {jid: r - 1 if r > row else r for jid, r in self.rows.items()}

    def update_job(self, job) -> None:
        row = self.rows.get(job.id)
        if row is None:
            return
        self.item(row, 1).setText(job.state)
        self._show_progress(self.cellWidget(row, 2), job)
        message = job.message
        if job.error is not None and job.state == "failed":
            message = getattr(job.error, "message", str(job.error))
        self.item(row, 6).setText(message)
        self.item(row, 6).setToolTip(plain(message))
        colour = plot_colors()["bad"] if job.state == "failed" else self.palette().color(QPalette.ColorRole.Text)
        for column in (0, 1, 6):
            self.item(row, column).setForeground(colour)
        button = self.cellWidget(row, 5)
        button.setEnabled(job.state == "running")
        self._times(job, row)

    @staticmethod
    def _show_progress(bar: QProgressBar, job) -> None:
        """Running: the fraction (or a busy bar when the job cannot tell); over: full for done and
        failed (in the failure colour), empty for cancelled, with the state as its text."""
        bar.setPalette(QPalette())
        if job.state in ("done", "failed", "cancelled"):
            bar.setRange(0, 1)
            bar.setValue(0 if job.state == "cancelled" else 1)
            bar.setFormat({"done": "done", "failed": "failed", "cancelled": "cancelled"}[job.state])
            if job.state == "failed":
                palette = bar.palette()
                palette.setColor(QPalette.ColorRole.Highlight, plot_colors()["bad"])
                bar.setPalette(palette)
        elif job.fraction is None:
            bar.setRange(0, 0)
        else:
            bar.setRange(0, 1000)
            bar.setFormat("%p %")
            bar.setValue(int(1000 * max(0.0, min(1.0, job.fraction))))

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        """Room for the header and MIN_ROWS jobs."""
        base = super().minimumSizeHint()
        height = (self.horizontalHeader().sizeHint().height() + MIN_ROWS * self.verticalHeader().defaultSectionSize()
                  + 2 * self.frameWidth() + 4)           # + a few pixels the header takes beyond its hint
        return QSize(base.width(), height)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(super().sizeHint().width(), self.minimumSizeHint().height()
                     + self.verticalHeader().defaultSectionSize())

    def _times(self, job, row: int) -> None:
        end = job.ended_at or time.monotonic()
        self.item(row, 3).setText(f"{end - job.started_at:.1f} s")
        eta = job.eta_s()
        self.item(row, 4).setText("" if eta is None else f"{eta:.0f} s")

    def _tick(self) -> None:
        for job_id, row in self.rows.items():
            job = self.jobs[job_id]
            if job.state in ("running", "cancelling"):
                self._times(job, row)

    def focused_job(self):
        """The selected job if it is running, else the newest running job."""
        items = self.selectedItems()
        if items:
            row = items[0].row()
            for job_id, r in self.rows.items():
                if r == row and self.jobs[job_id].state == "running":
                    return self.jobs[job_id]
        running = [j for j in self.jobs.values() if j.state == "running"]
        return running[-1] if running else None
