"""Speed & pauses: the project's speaking rate and the silences export puts between
sentences, paragraphs and chapters.

Why apart from Voices & presets: the two kinds of change cost very different
amounts. Pauses are laid in at assembly, so changing them renders nothing again
(export, preview, waveform and estimates follow at once); the speed is the voice's
length scale, which enters every sentence's cache key, so a new speed renders the
book again (the old audio stays cached, and going back finds it). The dialog says
which of the two a change is before it is saved.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from studio.audio.assemble import Pauses
from studio.core.speed import SPEED_RANGE, length_scale_of, speed_of
from studio.project.duration import Timing
from studio.project.settings import ProjectSettings
from studio.desktop.snapshot import BookSnapshot, estimate
from studio.ui.row_words import fmt_duration

#: pause fields shown, in order: (Pauses field, label)
PAUSE_FIELDS = (
    ("sentence", "Between sentences"),
    ("paragraph", "Between paragraphs"),
    ("title", "After a chapter title"),
    ("chapter_end", "At the end of a chapter"),
)


class PacingDialog(QDialog):
    applied = Signal(object)  # ProjectSettings

    def __init__(self, settings: ProjectSettings, snapshot: BookSnapshot | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Speed & pauses")
        self.settings, self.snapshot = settings, snapshot
        self.speed = QDoubleSpinBox()
        self.speed.setRange(*SPEED_RANGE)
        self.speed.setSingleStep(0.05)
        self.speed.setDecimals(2)
        self.speed.setSuffix("x")
        self.speed.setValue(speed_of(settings.synthesis.length_scale))
        self._shown_speed = self.speed.value()  # clamped: an untouched box must not change the key
        self.speed.setToolTip("How fast the voice speaks. A new speed renders every sentence again.")
        form = QFormLayout()
        form.addRow("Speed:", self.speed)
        self.pauses: dict[str, QDoubleSpinBox] = {}
        for name, label in PAUSE_FIELDS:
            box = QDoubleSpinBox()
            box.setRange(0.0, 10.0)
            box.setSingleStep(0.05)
            box.setDecimals(2)
            box.setSuffix(" s")
            box.setValue(getattr(settings.pauses, name))
            box.setToolTip("Silence inserted when chapters are assembled; changing it renders nothing again.")
            self.pauses[name] = box
            form.addRow(f"{label}:", box)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.speed.valueChanged.connect(self._describe)
        for box in self.pauses.values():
            box.valueChanged.connect(self._describe)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self._describe()

    def chosen_settings(self) -> ProjectSettings:
        pauses = Pauses(**{name: round(box.value(), 3) for name, box in self.pauses.items()})
        changes: dict[str, object] = {"pauses": pauses}
        if abs(self.speed.value() - self._shown_speed) > 1e-9:
            changes["synthesis"] = replace(self.settings.synthesis, length_scale=length_scale_of(self.speed.value()))
        return self.settings.with_changes(**changes)

    def book_seconds(self, settings: ProjectSettings) -> float | None:
        """The book's length with ``settings`` (rendered sentences at their length while
        the speed stays; all predicted at a new speed, since all render again)."""
        snap = self.snapshot
        if snap is None or snap.timing is None:
            return None
        ls = settings.synthesis.length_scale
        timing = Timing(snap.timing.rate, ls, settings.pauses)
        same_speed = ls == snap.timing.length_scale
        return sum(estimate(c, timing, None if same_speed else [replace(s, state="pending") for s in c.sentences])
                   for c in snap.chapters if c.included)

    def _describe(self) -> None:
        chosen = self.chosen_settings()
        words = []
        seconds = self.book_seconds(chosen)
        if seconds is not None:
            words.append(f"The book runs about {fmt_duration(seconds)} with these settings.")
        if chosen.synthesis != self.settings.synthesis:
            words.append("A new speed renders every sentence again (the current audio stays cached).")
        elif chosen.pauses != self.settings.pauses:
            words.append("New pauses render nothing again.")
        self.note.setText(" ".join(words))

    def _save(self) -> None:
        chosen = self.chosen_settings()
        if chosen != self.settings:
            self.applied.emit(chosen)
        self.accept()


def open_pacing_dialog(window) -> PacingDialog | None:  # window: studio.ui.main_window.MainWindow
    """The menu's hook: the dialog for the open project, saved through the session."""
    s = window.session
    if s.settings is None:
        return None
    dlg = PacingDialog(s.settings, s.snapshot, window)
    dlg.applied.connect(s.update_settings)
    window.pacing_dialog = dlg
    dlg.open()
    return dlg
