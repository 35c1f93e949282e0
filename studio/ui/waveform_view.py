"""The waveform of the selection: peaks, sentence boundaries, a play cursor, click to play.

Why it only paints: the peaks arrive precomputed (:mod:`studio.qt.waveform`,
off the GUI thread), so a paint is a few thousand lines whatever the length of
the chapter. A click asks for playback from the sentence under the pointer to
the end of its chapter; the cursor follows what the player reports.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from studio.qt.waveform import WaveformData
from studio.ui.book_model import fmt_duration

_WAVE = QColor("#1565c0")
_UNRENDERED = QColor(0, 0, 0, 22)
_BOUNDARY = QColor("#9e9e9e")
_CURSOR = QColor("#d32f2f")
_SELECTED = QColor(255, 236, 153, 140)


class WaveformView(QWidget):
    seekRequested = Signal(int)  # sentence id: play from it to the end of its chapter

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: WaveformData | None = None
        self.cursor_s: float | None = None
        self.highlight: int | None = None
        self.message = "Select a sentence, paragraph or chapter to see its waveform."
        self.setMinimumHeight(90)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(True)
        self.setToolTip("Click to play from that sentence to the end of its chapter")

    def set_data(self, data: WaveformData | None, message: str = "") -> None:
        self.data = data
        self.cursor_s = None
        if message:
            self.message = message
        self.update()

    def set_cursor(self, seconds: float | None) -> None:
        if seconds != self.cursor_s:
            self.cursor_s = seconds
            self.update()

    def set_highlight(self, sentence_id: int | None) -> None:
        self.highlight = sentence_id
        self.update()

    def x_of(self, seconds: float) -> float:
        return 0.0 if self.data is None else seconds / self.data.duration * max(1, self.width() - 1)

    def seconds_at(self, x: float) -> float:
        return 0.0 if self.data is None else max(0.0, x) / max(1, self.width() - 1) * self.data.duration

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.data is None or event.button() != Qt.MouseButton.LeftButton:
            return super().mousePressEvent(event)
        span = self.data.span_at(self.seconds_at(event.position().x()))
        if span is not None:
            self.seekRequested.emit(span.sentence_id)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        w, h = self.width(), self.height()
        p.fillRect(self.rect(), self.palette().base())
        data = self.data
        if data is None:
            p.setPen(self.palette().placeholderText().color())
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.message)
            return
        mid = h / 2.0
        for span in data.spans:
            x0, x1 = self.x_of(span.start), self.x_of(span.end)
            if span.sentence_id == self.highlight:
                p.fillRect(QRectF(x0, 0, max(1.0, x1 - x0), h), _SELECTED)
            elif not span.rendered:
                p.fillRect(QRectF(x0, 0, max(1.0, x1 - x0), h), _UNRENDERED)
        p.setPen(QPen(_WAVE, 1))
        n = len(data.mins)
        for x in range(w):
            a, b = x * n // w, max(x * n // w + 1, (x + 1) * n // w)
            lo, hi = min(data.mins[a:b]), max(data.maxs[a:b])
            if hi > lo:
                p.drawLine(QPointF(x, mid - hi * mid * 0.95), QPointF(x, mid - lo * mid * 0.95))
        p.setPen(QPen(_BOUNDARY, 1, Qt.PenStyle.DotLine))
        for span in data.spans[1:]:
            x = self.x_of(span.start)
            p.drawLine(QPointF(x, 0), QPointF(x, h))
        if self.cursor_s is not None:
            p.setPen(QPen(_CURSOR, 2))
            x = self.x_of(self.cursor_s)
            p.drawLine(QPointF(x, 0), QPointF(x, h))
        p.setPen(self.palette().text().color())
        p.drawText(QRectF(6, 2, w - 12, 18), Qt.AlignmentFlag.AlignLeft,
                   f"{data.label}  \u2014  {fmt_duration(data.duration)}, {len(data.spans)} sentence(s)")
