"""The render queue: jobs with progress and ETA, pause/resume, cancel, reorder.

Why a table model fed by :class:`~studio.desktop.messages.QueueSnapshot`: the queue
lives with the worker; the panel only ever shows the latest frozen snapshot and
sends requests (pause, cancel, move) back through the session.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QApplication, QHBoxLayout, QHeaderView, QLabel, QProgressBar, QPushButton, QStyle,
    QStyledItemDelegate, QStyleOptionProgressBar, QStyleOptionViewItem, QTableView, QVBoxLayout, QWidget,
)

from studio.core.words import counted
from studio.desktop.messages import JobState, ListeningState, QueueSnapshot
from studio.ui.common import fmt_eta

HEADERS = ("Job", "Status", "Progress", "ETA")


class QueueModel(QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.jobs: tuple[JobState, ...] = ()
        self.listening: ListeningState | None = None  # proof-listening the running job's last chapter

    def set_snapshot(self, snap: QueueSnapshot) -> None:
        if [j.job_id for j in snap.jobs] != [j.job_id for j in self.jobs]:
            self.beginResetModel()
            self.jobs = snap.jobs
            self.endResetModel()
        else:
            self.jobs = snap.jobs
            if self.jobs:
                self.dataChanged.emit(self.index(0, 0), self.index(len(self.jobs) - 1, len(HEADERS) - 1))

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.jobs)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        job = self.jobs[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return job.spec.label
            if col == 1:
                if self._heard_now(job):  # every sentence made, the chapter being heard back: not "running, 0 s"
                    return self.listening.words()  # type: ignore[union-attr]
                if self.listening is not None and self.listening.chapter is not None and job.status == "running":
                    said = self.listening.words()  # heard beside the render: both said
                    return f"running \u2014 {said[0].lower()}{said[1:]}"
                return job.status + (f" \u2014 {job.message}" if job.message and job.finished else "")
            if col == 2:
                total = max(job.total, job.done + job.failed)
                return f"{job.done + job.failed}/{total}" + (f" ({job.failed} failed)" if job.failed else "")
            if col == 3:
                if self._heard_now(job):
                    return "listening\u2026"
                if job.finished or job.status == "queued":
                    return ""
                if job.eta is None and job.started is not None:  # the first batch is being spoken: its time so far
                    return f"first sentences: {time.monotonic() - job.started:.0f} s"
                return ("~" if job.eta_basis else "") + fmt_eta(job.eta)
        if role == Qt.ItemDataRole.UserRole:
            return job.fraction
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == 3 and job.eta_basis:
                return f"time left {job.eta_basis}, until this render has measured its own"
            return job.message or (f"now: {job.current}" if job.current else job.status)
        return None

    def _heard_now(self, job: JobState) -> bool:
        return self.listening is not None and job.status == "running" and job.total > 0 \
            and job.done + job.failed >= job.total

    def set_listening(self, state: ListeningState | None) -> None:
        self.listening = state
        if self.jobs:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.jobs) - 1, len(HEADERS) - 1))


class ProgressDelegate(QStyledItemDelegate):
    """Draws the progress column as a native progress bar."""

    def paint(self, painter, option: QStyleOptionViewItem, index: QModelIndex) -> None:  # noqa: ANN001
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(2, 3, -2, -3)
        bar.minimum, bar.maximum = 0, 1000
        bar.progress = int(1000 * float(index.data(Qt.ItemDataRole.UserRole) or 0.0))
        bar.text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        bar.textVisible = True
        bar.state = option.state
        style = option.widget.style() if option.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)


class QueuePanel(QWidget):
    pauseToggled = Signal(bool)  # True: pause
    cancelJob = Signal(int)
    moveJob = Signal(int, int)
    clearFinished = Signal()
    renderBook = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = QueueModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setItemDelegateForColumn(2, ProgressDelegate(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().resizeSection(2, 180)
        self.table.horizontalHeader().resizeSection(3, 100)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        # at least four jobs in sight: the running one, an urgent edit and what waits behind them
        rows = self.table.verticalHeader().defaultSectionSize()
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height() + int(4.3 * rows) + 4)

        self.pause_btn = QPushButton("Pause")
        self.pause_btn.setCheckable(True)
        self.pause_btn.setToolTip("Pause the queue after the sentence being synthesized (space plays/pauses previews)")
        self.pause_btn.toggled.connect(self._pause_toggled)
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.clicked.connect(lambda: self._with_job(self.cancelJob.emit))
        self.up_btn = QPushButton("Move up")
        self.up_btn.clicked.connect(lambda: self._with_job(lambda j: self.moveJob.emit(j, -1)))
        self.down_btn = QPushButton("Move down")
        self.down_btn.clicked.connect(lambda: self._with_job(lambda j: self.moveJob.emit(j, 1)))
        self.clear_btn = QPushButton("Clear finished")
        self.clear_btn.clicked.connect(self.clearFinished)
        self.overall = QProgressBar()
        self.overall.setRange(0, 1000)
        self.overall.setFormat("idle")
        self.eta = QLabel("")
        self.eta.setMinimumWidth(160)

        buttons = QHBoxLayout()
        for b in (self.pause_btn, self.cancel_btn, self.up_btn, self.down_btn, self.clear_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        overall = QHBoxLayout()
        overall.addWidget(QLabel("Overall:"))
        overall.addWidget(self.overall, 1)
        overall.addWidget(self.eta)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)
        layout.addLayout(overall)
        self.snapshot = QueueSnapshot()
        self._tick = QTimer(self, interval=1000)  # "first sentences: 12 s" counts while nothing is measured
        self._tick.timeout.connect(lambda: self.model.set_snapshot(self.snapshot))
        self._update_buttons()

    def set_snapshot(self, snap: QueueSnapshot) -> None:
        selected = self.selected_job()
        self.snapshot = snap
        self.model.set_snapshot(snap)
        if selected is not None:
            for row, job in enumerate(snap.jobs):
                if job.job_id == selected:
                    self.table.selectRow(row)
        measuring = any(j.eta is None and j.started is not None and j.status == "running" for j in snap.jobs)
        if measuring != self._tick.isActive():
            self._tick.start() if measuring else self._tick.stop()
        self.pause_btn.blockSignals(True)
        self.pause_btn.setChecked(snap.paused)
        self.pause_btn.setText("Resume" if snap.paused else "Pause")
        self.pause_btn.blockSignals(False)
        active = snap.active
        if active:
            total = max(1, snap.overall_total)
            self.overall.setValue(int(1000 * snap.overall_done / total))
            state = "paused" if snap.paused else counted(len(active), "job")
            self.overall.setFormat(f"{snap.overall_done}/{snap.overall_total} sentences \u2014 {state}")
            self.eta.setText(f"ETA {fmt_eta(snap.overall_eta)}" if not snap.paused else "paused")
        else:
            self.overall.setValue(1000 if snap.jobs else 0)
            self.overall.setFormat("all jobs finished" if snap.jobs else "idle")
            self.eta.setText("")
        heard = self.model.listening
        if heard is not None and (not active or all(j.done + j.failed >= j.total > 0 for j in active)):
            self.overall.setValue(int(10 * heard.percent))
            self.overall.setFormat(heard.words())
            self.eta.setText("listening\u2026")
        self._update_buttons()

    def set_listening(self, state: ListeningState | None) -> None:
        """Proof-listening's progress: in the running job's row and the overall line while a chapter is
        heard (a job whose sentences are all made waits for it), or after the jobs."""
        self.model.set_listening(state)
        self.set_snapshot(self.snapshot)

    def selected_job(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.model.jobs):
            return None
        return self.model.jobs[rows[0].row()].job_id

    def _with_job(self, fn) -> None:  # noqa: ANN001
        job = self.selected_job()
        if job is None:
            active = self.snapshot.active
            job = active[0].job_id if active else None
        if job is not None:
            fn(job)

    def _pause_toggled(self, on: bool) -> None:
        self.pause_btn.setText("Resume" if on else "Pause")
        self.pauseToggled.emit(on)

    def _update_buttons(self) -> None:
        job = self.snapshot.job(self.selected_job()) if self.selected_job() is not None else None
        has_active = bool(self.snapshot.active)
        self.cancel_btn.setEnabled(has_active if job is None else not job.finished)
        queued = job is not None and job.status == "queued"
        self.up_btn.setEnabled(queued)
        self.down_btn.setEnabled(queued)
        self.clear_btn.setEnabled(any(j.finished for j in self.snapshot.jobs))
