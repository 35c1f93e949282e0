"""The waveform of the selection: peaks, sentence boundaries, a play cursor, click to play.

Why it only paints: the peaks arrive precomputed (:mod:`studio.desktop.waveform`,
off the GUI thread), so a paint is a few thousand lines whatever the length of
the chapter. A click asks for playback from the sentence under the pointer to
the end of its chapter; the cursor follows what the player reports. Scrubbing
plays grains of the cached audio from the exact time under the mouse
(:mod:`studio.desktop.scrub`) through the same preview player.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPen, QWheelEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from studio.core.words import counted
from studio.desktop.messages import PlaybackPosition
from studio.desktop.scrub import GRAIN_S, SCRUB_LABEL, Grain
from studio.desktop.session import ProjectSession
from studio.desktop.snapshot import ChapterNode, SentenceNode
from studio.project.pauses import MAX_PAUSE_S
from studio.desktop.waveform import SentenceSpan, WaveformData
from studio.ui.row_words import fmt_duration
from studio.ui.book_view import BookPanel

_WAVE = QColor("#1565c0")
_UNRENDERED = QColor(0, 0, 0, 22)
_BOUNDARY = QColor("#9e9e9e")
_CURSOR = QColor("#d32f2f")
_SELECTED = QColor(255, 236, 153, 140)
_RANGE = QColor(21, 101, 192, 45)
_OWN = QColor("#ef6c00")  # a pause the producer set
#: ruler steps (seconds)
RULER_STEPS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0)


class WaveformView(QWidget):
    """Peaks you can work in: zoom, a time ruler, a selection, the pause after a sentence.

    Mouse: the wheel zooms around the pointer (Shift+wheel scrolls); dragging in
    the wave selects a range (``rangePlayRequested`` plays it); a click plays from
    the sentence under it, and so does a click in the ruler; dragging in the ruler
    (or dragging the playhead itself) scrubs: short grains of the audio from the
    exact time under the mouse play as it moves (``scrubbed``, at most one grain
    per :data:`~studio.desktop.scrub.GRAIN_S`), and the playhead stays where the mouse
    is let go (``scrubEnded``, ``parked_s``); dragging the handle at the end of a pause makes
    that pause longer or shorter (``pauseChanged``). Keys: +/- zoom, 0 fits,
    Home/End jump to the first/last sentence, J/L play from the previous/next
    sentence, K stops, Enter plays the selection (Space is the window's play/pause).
    """

    seekRequested = Signal(int)  # sentence id: play from it to the end of its chapter
    rangePlayRequested = Signal(object)  # tuple of sentence ids in the selection
    pauseChanged = Signal(int, float)  # sentence id, the pause after it (seconds)
    focusChanged = Signal(object)  # SentenceSpan | None: the sentence the pause editor works on
    stopRequested = Signal()
    scrubbed = Signal(float)  # seconds: play a grain from there
    scrubEnded = Signal(float)  # seconds: the playhead was let go there

    RULER = 18
    HANDLE_PX = 5

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: WaveformData | None = None
        self.cursor_s: float | None = None
        self.highlight: int | None = None
        self.message = "Select a sentence, paragraph or chapter to see its waveform."
        self.zoom = 1.0
        self.offset_s = 0.0
        self.selection: tuple[float, float] | None = None
        self.focus: SentenceSpan | None = None
        self._press: tuple[str, float, SentenceSpan | None] | None = None  # (mode, seconds, span)
        self._drag_gap: float | None = None
        #: where a scrub left the playhead (shown while nothing plays)
        self.parked_s: float | None = None
        self._scrub_t: float | None = None  # the mouse's time while scrubbing (None: not scrubbing)
        self._scrub_sent: float | None = None
        self._grain_timer = QTimer(self, singleShot=True, interval=int(GRAIN_S * 1000), timeout=self._next_grain)
        self.setMinimumHeight(110)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setToolTip("Click: play from that sentence \u00b7 drag: select a range (Enter plays it) \u00b7 "
                        "drag in the ruler or drag the playhead: scrub \u00b7 "
                        "drag a pause's handle: change it \u00b7 wheel/+/-: zoom \u00b7 J/K/L, Home/End")

    # ------------------------------------------------------------ data

    def set_data(self, data: WaveformData | None, message: str = "") -> None:
        same = data is not None and self.data is not None and data.label == self.data.label
        self.data = data
        if not same:  # another selection: fit it; the same one redrawn (a render, a pause) keeps the view
            self.zoom, self.offset_s, self.selection, self.parked_s = 1.0, 0.0, None, None
        self.cursor_s = self.parked_s
        if data is None or self.focus is None or data.span_of(self.focus.sentence_id) is None:
            self._set_focus(None)
        else:
            self._set_focus(data.span_of(self.focus.sentence_id))
        if message:
            self.message = message
        self._clamp()
        self.update()

    def set_cursor(self, seconds: float | None) -> None:
        """The playhead at ``seconds`` (None: nothing plays -- back where a scrub parked it)."""
        seconds = self.parked_s if seconds is None else seconds
        if seconds != self.cursor_s:
            self.cursor_s = seconds
            self.update()

    def set_highlight(self, sentence_id: int | None) -> None:
        self.highlight = sentence_id
        if sentence_id is not None and self.data is not None and self.data.span_of(sentence_id) is not None:
            self._set_focus(self.data.span_of(sentence_id))
        self.update()

    # ------------------------------------------------------------ geometry

    @property
    def visible_s(self) -> float:
        return 0.0 if self.data is None else self.data.duration / self.zoom

    def x_of(self, seconds: float) -> float:
        if self.data is None:
            return 0.0
        return (seconds - self.offset_s) / max(self.visible_s, 1e-9) * max(1, self.width() - 1)

    def seconds_at(self, x: float) -> float:
        if self.data is None:
            return 0.0
        t = self.offset_s + max(0.0, x) / max(1, self.width() - 1) * self.visible_s
        return min(max(0.0, t), self.data.duration)

    def zoom_by(self, factor: float, at_x: float | None = None) -> None:
        """Zoom in (factor > 1) or out around a point (default: the middle)."""
        if self.data is None:
            return
        x = self.width() / 2 if at_x is None else at_x
        anchor = self.seconds_at(x)
        self.zoom = min(max(1.0, self.zoom * factor), max(1.0, self.data.duration / 0.05))
        self.offset_s = anchor - x / max(1, self.width() - 1) * self.visible_s
        self._clamp()
        self.update()

    def scroll_to(self, seconds: float) -> None:
        """Bring a time into view (it lands a tenth from the left edge)."""
        if self.data is None:
            return
        if not self.offset_s <= seconds <= self.offset_s + self.visible_s:
            self.offset_s = seconds - self.visible_s * 0.1
            self._clamp()
            self.update()

    def _clamp(self) -> None:
        if self.data is None:
            self.offset_s = 0.0
            return
        self.offset_s = min(max(0.0, self.offset_s), max(0.0, self.data.duration - self.visible_s))

    def handle_at(self, x: float) -> SentenceSpan | None:
        """The sentence whose pause ends under ``x`` (its handle: the end of the silence after it)."""
        if self.data is None:
            return None
        for span in self.data.spans[:-1]:
            if abs(self.x_of(span.end + span.gap) - x) <= self.HANDLE_PX:
                return span
        return None

    def spans_in(self, a: float, b: float) -> tuple[int, ...]:
        lo, hi = min(a, b), max(a, b)
        return tuple(s.sentence_id for s in (self.data.spans if self.data else ()) if s.end > lo and s.start < hi)

    # ------------------------------------------------------------ input

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120.0
        if not steps or self.data is None:
            return super().wheelEvent(event)
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.offset_s -= steps * self.visible_s * 0.15
            self._clamp()
            self.update()
        else:
            self.zoom_by(1.25 ** steps, event.position().x())
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, data = event.key(), self.data
        if data is None:
            return super().keyPressEvent(event)
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(1.5)
        elif key == Qt.Key.Key_Minus:
            self.zoom_by(1 / 1.5)
        elif key == Qt.Key.Key_0:
            self.zoom_by(1 / self.zoom)
        elif key in (Qt.Key.Key_Home, Qt.Key.Key_End):
            span = data.spans[0] if key == Qt.Key.Key_Home else data.spans[-1]
            self._set_focus(span)
            self.scroll_to(span.start)
            self.offset_s = 0.0 if key == Qt.Key.Key_Home else data.duration
            self._clamp()
            self.update()
        elif key in (Qt.Key.Key_J, Qt.Key.Key_L) and data.spans:
            ids = [s.sentence_id for s in data.spans]
            at = ids.index(self.focus.sentence_id) if self.focus is not None else (0 if key == Qt.Key.Key_L else 1)
            span = data.spans[max(0, min(len(ids) - 1, at + (1 if key == Qt.Key.Key_L else -1)))]
            self._set_focus(span)
            self.scroll_to(span.start)
            self.seekRequested.emit(span.sentence_id)
        elif key == Qt.Key.Key_K:
            self.stopRequested.emit()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.selection is not None:
            self.rangePlayRequested.emit(self.spans_in(*self.selection))
        else:
            return super().keyPressEvent(event)
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.data is None or event.button() != Qt.MouseButton.LeftButton:
            return super().mousePressEvent(event)
        x, y = event.position().x(), event.position().y()
        t = self.seconds_at(x)
        handle = self.handle_at(x) if y > self.RULER else None
        on_head = self.cursor_s is not None and abs(self.x_of(self.cursor_s) - x) <= self.HANDLE_PX
        mode = "pause" if handle is not None else "scrub" if y <= self.RULER or on_head else "select"
        self._press = (mode, t, handle)
        if mode == "pause":
            self._set_focus(handle)
            self._drag_gap = handle.gap  # type: ignore[union-attr]
        elif mode == "scrub":
            self.set_cursor(t)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        x = event.position().x()
        if self._press is None:
            near = self.handle_at(x) if self.data is not None and event.position().y() > self.RULER else None
            self.setCursor(Qt.CursorShape.SizeHorCursor if near is not None else Qt.CursorShape.ArrowCursor)
            return
        mode, t0, span = self._press
        t = self.seconds_at(x)
        if mode == "pause" and span is not None:
            self._drag_gap = round(min(MAX_PAUSE_S, max(0.0, t - span.end)), 2)
        elif mode == "scrub":
            self.set_cursor(t)
            if self._scrub_t is not None or abs(self.x_of(t) - self.x_of(t0)) >= 3:  # a drag, not a click
                self._scrub_t = t
                if not self._grain_timer.isActive():
                    self._next_grain()
        elif abs(self.x_of(t) - self.x_of(t0)) >= 3:
            self.selection = (min(t0, t), max(t0, t))
        self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        press, self._press = self._press, None
        if press is None or self.data is None:
            return super().mouseReleaseEvent(event)
        mode, t0, span = press
        t = self.seconds_at(event.position().x())
        if mode == "pause" and span is not None:
            gap, self._drag_gap = self._drag_gap, None
            if gap is not None and abs(gap - span.gap) >= 0.01:
                self.pauseChanged.emit(span.sentence_id, gap)
        elif mode == "scrub" and self._scrub_t is not None:  # a scrub ends: the playhead stays there
            self._grain_timer.stop()
            self._scrub_t = self._scrub_sent = None
            self.parked_s = t
            self.set_cursor(t)
            self.scrubEnded.emit(t)
        elif mode == "scrub" or abs(self.x_of(t) - self.x_of(t0)) < 3:
            hit = self.data.span_at(t)
            if mode == "select":
                self.selection = None
            self.parked_s = None  # a click seeks: the playback leads the playhead
            if hit is not None:
                self._set_focus(hit)
                self.seekRequested.emit(hit.sentence_id)
        self.update()

    def _next_grain(self) -> None:
        """A grain from where the mouse is now, unless it has not moved since the last one."""
        t = self._scrub_t
        if t is None or t == self._scrub_sent:
            return
        self._scrub_sent = t
        self.scrubbed.emit(t)
        self._grain_timer.start()  # the next one when this one has played

    def _set_focus(self, span: SentenceSpan | None) -> None:
        if span != self.focus:
            self.focus = span
            self.focusChanged.emit(span)

    # ------------------------------------------------------------ painting

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        w, h = self.width(), self.height()
        p.fillRect(self.rect(), self.palette().base())
        data = self.data
        if data is None:
            p.setPen(self.palette().placeholderText().color())
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.message)
            return
        top = self.RULER
        mid = top + (h - top) / 2.0
        amp = (h - top) / 2.0 * 0.95
        for span in data.spans:
            x0, x1 = self.x_of(span.start), self.x_of(span.end)
            if x1 < 0 or x0 > w:
                continue
            if span.sentence_id == self.highlight:
                p.fillRect(QRectF(x0, top, max(1.0, x1 - x0), h - top), _SELECTED)
            elif not span.rendered:
                p.fillRect(QRectF(x0, top, max(1.0, x1 - x0), h - top), _UNRENDERED)
        if self.selection is not None:
            a, b = (self.x_of(v) for v in self.selection)
            p.fillRect(QRectF(a, top, max(1.0, b - a), h - top), _RANGE)
        p.setPen(QPen(_WAVE, 1))
        n = len(data.mins)
        for x in range(w):
            t0, t1 = self.seconds_at(x), self.seconds_at(x + 1)
            a = min(n - 1, int(t0 / data.duration * n))
            b = max(a + 1, min(n, int(t1 / data.duration * n)))
            lo, hi = min(data.mins[a:b]), max(data.maxs[a:b])
            if hi > lo:
                p.drawLine(QPointF(x, mid - hi * amp), QPointF(x, mid - lo * amp))
        for span in data.spans[:-1]:
            gap = self._drag_gap if self._press is not None and self._press[2] is span else span.gap
            x = self.x_of(span.end + (gap or 0.0))
            p.setPen(QPen(_OWN if span.own_gap or gap != span.gap else _BOUNDARY, 1, Qt.PenStyle.DotLine))
            p.drawLine(QPointF(x, top), QPointF(x, h))
            if self.focus is not None and span.sentence_id == self.focus.sentence_id:
                p.fillRect(QRectF(x - 3, top, 6, 10), _OWN)
                p.drawText(QRectF(x + 5, top, 120, 14), Qt.AlignmentFlag.AlignLeft, f"pause {gap:.2f} s")
        if self.cursor_s is not None:
            p.setPen(QPen(_CURSOR, 2))
            x = self.x_of(self.cursor_s)
            p.drawLine(QPointF(x, 0), QPointF(x, h))
        self._ruler(p, w)
        p.setPen(self.palette().text().color())
        zoom = f", zoom {self.zoom:.1f}\u00d7" if self.zoom > 1.01 else ""
        p.drawText(QRectF(6, top + 2, w - 12, 16), Qt.AlignmentFlag.AlignLeft,
                   f"{data.label}  \u2014  {fmt_duration(data.duration)}, {counted(len(data.spans), 'sentence')}{zoom}")

    def _ruler(self, p: QPainter, w: int) -> None:
        """Ticks at a step that leaves about 80 px between labels."""
        p.fillRect(QRectF(0, 0, w, self.RULER), self.palette().alternateBase())
        step = next((s for s in RULER_STEPS if self.x_of(self.offset_s + s) - self.x_of(self.offset_s) >= 80),
                    RULER_STEPS[-1])
        p.setPen(self.palette().text().color())
        t = (self.offset_s // step) * step
        while t <= self.offset_s + self.visible_s + step:
            x = self.x_of(t)
            if 0 <= x <= w:
                p.drawLine(QPointF(x, self.RULER - 5), QPointF(x, self.RULER))
                m, s = divmod(t, 60.0)
                label = f"{int(m)}:{s:04.1f}" if step < 1 else f"{int(m)}:{int(round(s)):02d}"
                p.drawText(QPointF(x + 2, self.RULER - 6), label)
            t += step


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
        view.rangePlayRequested.connect(self.play_range)
        view.pauseChanged.connect(self.set_gap)
        view.stopRequested.connect(session.preview.stop)
        view.scrubbed.connect(self.grain)
        view.scrubEnded.connect(lambda _t: session.preview.stop())

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

    def grain(self, seconds: float) -> None:
        """Play the grain of audio at ``seconds`` (silence in a pause or an unrendered sentence)."""
        data = self.view.data
        span = data.span_at(seconds) if data is not None else None
        node = self.book.model.sentence(span.sentence_id) if span is not None else None
        if span is None or node is None or not node.cached or not node.cache_key or seconds >= span.end:
            return
        self.session.preview.play_grain(node.id, Grain(node.cache_key, seconds - span.start))

    def cursor(self, pos: PlaybackPosition) -> None:
        if pos.label == SCRUB_LABEL:
            return  # while scrubbing the mouse leads the playhead
        data, sid = self.view.data, pos.sentence_id
        span = data.span_of(sid) if data is not None and sid is not None and pos.state != "finished" else None
        if span is None:
            self.view.set_cursor(None)
            return
        if self._base[0] != sid:
            self._base = (sid, pos.played_s)
        self.view.set_cursor(min(span.end, span.start + pos.played_s - self._base[1]))

    def set_gap(self, sentence_id: int, gap: float | None) -> None:
        """The silence drawn after a sentence is its pause after plus the next one's pause
        before: a dragged or typed gap sets the first (None: the project's pause)."""
        data, model = self.view.data, self.book.model
        ahead = 0.0
        if gap is not None and data is not None:
            ids = [s.sentence_id for s in data.spans]
            nxt = model.sentence(ids[ids.index(sentence_id) + 1]) if sentence_id in ids[:-1] else None
            ahead = (nxt.direction.pause_before or 0.0) if nxt is not None else 0.0
        self.session.set_pause_after(sentence_id, None if gap is None else round(max(0.0, gap - ahead), 2))

    def play_range(self, ids: tuple[int, ...]) -> None:
        """Play the sentences a selection touches (whole sentences: the player speaks sentences)."""
        nodes = [n for n in (self.book.model.sentence(i) for i in ids) if n is not None]
        if nodes:
            self.session.play(nodes, f"selection: {counted(len(nodes), 'sentence')}")

    def play_from(self, sentence_id: int) -> None:
        snap, node = self.book.model.snapshot, self.book.model.sentence(sentence_id)
        if snap is None or node is None:
            return
        chapter = snap.chapters[node.chapter]
        ids = [x.id for x in chapter.sentences]
        nodes = [self.book.model.sentence(i) for i in ids[ids.index(sentence_id):]]
        self.session.play([n for n in nodes if n is not None],
                          f"{chapter.display_name}, from \u201c{node.text[:30]}\u201d")
