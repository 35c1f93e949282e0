"""The waveform dock's bar: zoom, play the selection, and the pause after the sentence in
focus, typed (the same value dragging its handle in the waveform sets).

Why a bar beside the drawing: dragging is quick but rough; a producer who wants
"1.20 s after this line" types it. Both end in
:meth:`~studio.desktop.session.ProjectSession.set_pause_after`, which re-renders nothing.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from studio.project.pauses import MAX_PAUSE_S
from studio.desktop.session import ProjectSession
from studio.desktop.waveform import SentenceSpan
from studio.ui.waveform_view import WaveformController, WaveformView


class WaveformPanel(QWidget):
    """The view and its bar (the dock's widget)."""

    def __init__(self, view: WaveformView, controller: WaveformController, session: ProjectSession,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view, self.session, self.controller = view, session, controller
        self.zoom_in = QPushButton("+")
        self.zoom_in.setToolTip("Zoom in (+, or the mouse wheel)")
        self.zoom_in.clicked.connect(lambda: view.zoom_by(1.5))
        self.zoom_out = QPushButton("\u2212")
        self.zoom_out.setToolTip("Zoom out (-); 0 fits the whole selection")
        self.zoom_out.clicked.connect(lambda: view.zoom_by(1 / 1.5))
        self.play_sel = QPushButton("Play selection")
        self.play_sel.setToolTip("Play the sentences the dragged range touches (Enter)")
        self.play_sel.clicked.connect(lambda: view.selection is not None and controller.play_range(
            view.spans_in(*view.selection)))
        self.pause_label = QLabel("Pause after:")
        self.pause = QDoubleSpinBox()
        self.pause.setRange(0.0, MAX_PAUSE_S)
        self.pause.setSingleStep(0.05)
        self.pause.setDecimals(2)
        self.pause.setSuffix(" s")
        self.pause.setKeyboardTracking(False)  # one change when the producer is done typing
        self.pause.setToolTip("The silence after the sentence in focus; export and the estimates follow, "
                              "nothing is rendered again. Drag the orange handle in the waveform to do the same.")
        self.pause.valueChanged.connect(self._typed)
        self.reset = QPushButton("Project pause")
        self.reset.setToolTip("Back to the project's sentence/paragraph pause")
        self.reset.clicked.connect(lambda: self.view.focus is not None and controller.set_gap(
            self.view.focus.sentence_id, None))
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        for w in (self.zoom_out, self.zoom_in, self.play_sel):
            bar.addWidget(w)
        bar.addStretch(1)
        for w in (self.pause_label, self.pause, self.reset):
            bar.addWidget(w)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(bar)
        layout.addWidget(view, 1)
        view.focusChanged.connect(self._focused)
        self._focused(None)

    def _focused(self, span: SentenceSpan | None) -> None:
        self.pause.blockSignals(True)
        self.pause.setValue(span.gap if span is not None else 0.0)
        self.pause.blockSignals(False)
        last = span is None or self.view.data is None or span == self.view.data.spans[-1]
        for w in (self.pause, self.reset):
            w.setEnabled(not last)
        self.reset.setEnabled(span is not None and span.own_gap)

    def _typed(self, seconds: float) -> None:
        span = self.view.focus
        if span is not None and abs(seconds - span.gap) >= 0.005:
            self.controller.set_gap(span.sentence_id, round(seconds, 2))
