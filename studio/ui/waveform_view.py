"""The waveform of the selection: peaks, sentence boundaries, a play cursor, click to play.

Why it only paints: the peaks arrive precomputed (:mod:`studio.qt.waveform`,
off the GUI thread), so a paint is a few thousand lines whatever the length of
the chapter. A click asks for playback from the sentence under the pointer to
the end of its chapter; the cursor follows what the player reports.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from studio.qt.messages import PlaybackPosition
from studio.qt.session import ProjectSession
from studio.qt.snapshot import ChapterNode, SentenceNode
from studio.qt.waveform import WaveformData
from studio.ui.book_model import fmt_duration
from studio.ui.book_view import BookPanel

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


class WaveformController(QObject):
    """Keeps the view on the selection: asks for peaks, redraws after renders, moves the cursor.

    Why apart from the window: the window only says what was selected, what
    changed and where playback is; this decides when the waveform is stale and
    maps the player's position to a time in the drawing.
    """

    def __init__(self, session: ProjectSession, book: BookPanel, view: WaveformView, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session, self.book, self.view = session, book, view
        self.node: object = None
        self._base: tuple[int | None, float] = (None, 0.0)
        self._timer = QTimer(self, singleShot=True, interval=400, timeout=self.refresh)
        session.waveformReady.connect(self.ready)
        view.seekRequested.connect(self.play_from)

    def show(self, node: object) -> None:
        self.node = node
        self.refresh()

    def refresh(self) -> None:
        node, model = self.node, self.book.model
        if node is None or self.session.project is None:
            self.view.set_data(None)
            return
        if isinstance(node, SentenceNode):
            nodes, label = [model.sentence(node.id) or node], node.text[:60]
        else:
            nodes = [model.sentence(x.id) or x for x in node.sentences]  # type: ignore[attr-defined]
            label = node.display_name if isinstance(node, ChapterNode) else node.text[:60]  # type: ignore[attr-defined]
        if nodes:
            self.session.request_waveform(nodes, label)

    def ready(self, data: WaveformData) -> None:
        self.view.set_data(data)
        node = self.node
        self.view.set_highlight(node.id if isinstance(node, SentenceNode) and len(data.spans) > 1 else None)

    def stale(self, ids: set[int]) -> None:
        data = self.view.data
        if data is not None and any(span.sentence_id in ids for span in data.spans):
            self._timer.start()  # a render or a new take changed what is drawn

    def cursor(self, pos: PlaybackPosition) -> None:
        data, sid = self.view.data, pos.sentence_id
        span = data.span_of(sid) if data is not None and sid is not None and pos.state != "finished" else None
        if span is None:
            self.view.set_cursor(None)
            return
        if self._base[0] != sid:
            self._base = (sid, pos.played_s)
        self.view.set_cursor(min(span.end, span.start + pos.played_s - self._base[1]))

    def play_from(self, sentence_id: int) -> None:
        snap, node = self.book.model.snapshot, self.book.model.sentence(sentence_id)
        if snap is None or node is None:
            return
        chapter = snap.chapters[node.chapter]
        ids = [x.id for x in chapter.sentences]
        nodes = [self.book.model.sentence(i) for i in ids[ids.index(sentence_id):]]
        self.session.play([n for n in nodes if n is not None],
                          f"{chapter.display_name}, from \u201c{node.text[:30]}\u201d")
