"""The Cast dock: the book's characters, their line counts and voices, and the producer's changes.

Why a dock and not a dialog: casting is done while listening -- play a line in the
tree, change the character's pitch here, render again -- so the list stays beside
the book. Only the characters' lines are rendered again after a change (their cache
keys carry the voice, speaker and performance).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.project.cast import EXPRESSIVE_RANGE, PACE_RANGE, PITCH_RANGE, Casting, Performance
from studio.desktop.cast import CastController, CastView, VoiceSpeakers, merge_proposal
from studio.ui.cast_review import ReviewList
from studio.ui.common import SAMPLE_TEXT

COLUMNS = ("Character", "Lines", "Voice", "Also called", "First line")
NARRATOR = "Narrator"


class CastPanel(QWidget):
    """The list and its buttons; says what the producer wants through signals."""

    enabledChanged = Signal(bool)
    castingChosen = Signal(str, object)  # name, Casting
    mergeChosen = Signal(str, str)  # keep, other
    renameChosen = Signal(str, str)  # old, new
    splitChosen = Signal(str)  # a name or descriptor to make a character of its own
    sampleLine = Signal(object)  # the CastMember whose first line to hear in its voice
    speakerSample = Signal(str, object, str)  # voice id ("" the narrator's), speaker id or None, language

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = CastView("", False, (), 0)
        self.enabled = QCheckBox("Voice the characters (casting)")
        self.enabled.setToolTip("Off: the narrator reads every line. On: each character's lines in its voice")
        self.summary = QLabel("Open a project to see its characters.")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)  # two rows: merge them
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.voice_button = QPushButton("Voice\u2026")
        self.voice_button.setToolTip("Another voice, a speaker, or a performance of the narrator's voice")
        self.merge_button = QPushButton("Merge into\u2026")
        self.merge_button.setToolTip("The same character under another name (\"Ahab\" into \"Captain Ahab\")")
        self.rename_button = QPushButton("Rename\u2026")
        self.rename_button.setToolTip("Call the character by another name (kept when the book is imported again)")
        self.split_button = QPushButton("Split\u2026")
        self.split_button.setToolTip("Make one of the character's other names or descriptors a character of its own")
        self.play_button = QPushButton("Play a sample line")
        self.play_button.setToolTip("Hear the character's first line in its voice, speaker and performance")
        buttons = QHBoxLayout()
        for b in (self.play_button, self.voice_button, self.merge_button, self.rename_button, self.split_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.enabled)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self.review = ReviewList()  # the lines whose speaker is not sure, one click to choose
        layout.addWidget(self.review, 1)
        self.enabled.toggled.connect(lambda on: self.enabledChanged.emit(on) if on != self.view.enabled else None)
        self.voice_button.clicked.connect(self._ask_voice)
        self.merge_button.clicked.connect(self._ask_merge)
        self.rename_button.clicked.connect(self._ask_rename)
        self.split_button.clicked.connect(self._ask_split)
        self.play_button.clicked.connect(self._play)

    def set_view(self, view: CastView) -> None:
        self.view = view
        self.enabled.blockSignals(True)
        self.enabled.setChecked(view.enabled)
        self.enabled.blockSignals(False)
        self.summary.setText(f"{len(view.members)} character(s); {view.unattributed} line(s) unattributed "
                             "(the narrator reads them)" if view.folder else "Open a project to see its characters.")
        self.table.setRowCount(len(view.members))
        for row, m in enumerate(view.members):
            also = ", ".join(m.also_called)
            for col, text in enumerate((m.name, str(m.lines), m.casting.words(), also, m.first_line)):
                item = QTableWidgetItem(text)
                if col == 3:
                    item.setToolTip("Other names, merged names and descriptors of this character; "
                                    "Split\u2026 makes one of them a character of its own")
                item.setData(Qt.ItemDataRole.UserRole, m.name)
                self.table.setItem(row, col, item)
        has = bool(view.members)
        self.voice_button.setEnabled(has)
        self.play_button.setEnabled(has)
        self.rename_button.setEnabled(has)
        self.split_button.setEnabled(any(m.also_called for m in view.members))
        self.merge_button.setEnabled(len(view.members) > 1)
        self.review.set_lines(view.review)

    def selected_name(self) -> str:
        """The current row's character (the last one clicked when several are selected)."""
        item = self.table.item(self.table.currentRow(), 0) if self.table.currentRow() >= 0 else None
        if item is not None and item.isSelected():
            return str(item.data(Qt.ItemDataRole.UserRole))
        names = self.selected_names()
        return names[0] if names else ""

    def selected_names(self) -> tuple[str, ...]:
        rows = sorted({i.row() for i in self.table.selectedItems()})
        return tuple(str(self.table.item(r, 0).data(Qt.ItemDataRole.UserRole)) for r in rows)

    def _play(self) -> None:
        member = next((m for m in self.view.members if m.name == self.selected_name()), None)
        if member is not None and member.first_line:
            self.sampleLine.emit(member)

    def _ask_voice(self) -> None:
        name = self.selected_name()
        member = next((m for m in self.view.members if m.name == name), None)
        if member is None:
            return
        dialog = CastingDialog(name, member.casting, self.view.voices, self)
        dialog.sampleRequested.connect(self.speakerSample.emit)
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.casting() != member.casting:
            self.castingChosen.emit(name, dialog.casting())  # closed as it was: nothing changes, nothing renders

    def _ask_merge(self) -> None:
        other = self.selected_name()
        names = [m.name for m in self.view.members if m.name != other]
        if not other or not names:
            return
        proposed = merge_proposal(other, names, self.selected_names())
        keep, ok = QInputDialog.getItem(self, "Merge", f"{other} is the same character as:", names, proposed, True)
        if ok and keep.strip() and keep.strip() != other:
            self.mergeChosen.emit(keep.strip(), other)

    def _ask_split(self) -> None:
        member = next((m for m in self.view.members if m.name == self.selected_name()), None)
        if member is None or not member.also_called:
            return
        name, ok = QInputDialog.getItem(self, "Split", f"Which of {member.name}'s names is someone else?",
                                        list(member.also_called), 0, False)
        if ok and name:
            self.splitChosen.emit(name)

    def _ask_rename(self) -> None:
        old = self.selected_name()
        if not old:
            return
        new, ok = QInputDialog.getText(self, "Rename", f"New name for {old}:", text=old)
        if ok and new.strip() and new.strip() != old:
            self.renameChosen.emit(old, new.strip())


class CastingDialog(QDialog):
    """A character's voice: an installed voice (or the narrator's), one of its speakers (each
    heard before choosing: *Play sample*), and pitch, pace and expressiveness."""

    sampleRequested = Signal(str, object, str)  # voice id, speaker id or None, the voice's language

    def __init__(self, name: str, casting: Casting, voices: tuple[VoiceSpeakers, ...] = (),
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Voice of {name}")
        self.voices = {v.voice_id: v for v in voices}
        self.voice = QComboBox()
        self.voice.addItem("The narrator's voice", "")
        for v in voices:
            self.voice.addItem(v.name or v.voice_id, v.voice_id)
        if casting.voice_id and casting.voice_id not in self.voices:
            self.voice.addItem(f"{casting.voice_id} (not installed)", casting.voice_id)
        self.voice.setCurrentIndex(max(0, self.voice.findData(casting.voice_id)))
        self.speaker = QComboBox()
        self.voice.currentIndexChanged.connect(lambda _i: self._speakers(None))
        self._speakers(casting.speaker)
        self.sample_button = QPushButton("Play sample")
        self.sample_button.setToolTip("Hear a short sentence from this voice and speaker")
        self.sample_button.clicked.connect(self.play_sample)
        speaker_row = QHBoxLayout()
        speaker_row.addWidget(self.speaker, 1)
        speaker_row.addWidget(self.sample_button)
        self.pitch = self._spin(PITCH_RANGE, casting.performance.pitch, 0.5, " semitones")
        self.pace = self._spin(PACE_RANGE, casting.performance.pace, 0.05, "x")
        self.expressive = self._spin(EXPRESSIVE_RANGE, casting.performance.expressive, 0.1, "x")
        form = QFormLayout(self)
        form.addRow("Voice", self.voice)
        form.addRow("Speaker", speaker_row)
        form.addRow("Pitch", self.pitch)
        form.addRow("Pace", self.pace)
        form.addRow("Expressiveness", self.expressive)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)
        form.addRow(box)

    def _speakers(self, chosen: int | None) -> None:
        """The chosen voice's speakers ("default" for a single-speaker voice)."""
        self.speaker.clear()
        self.speaker.addItem("default", None)
        voice = self.voices.get(self.voice.currentData() or "")
        for sid, name in voice.speakers if voice else ():
            self.speaker.addItem(f"{sid}: {name}", sid)
        if chosen is not None and self.speaker.findData(chosen) < 0:
            self.speaker.addItem(str(chosen), chosen)
        self.speaker.setCurrentIndex(max(0, self.speaker.findData(chosen)) if chosen is not None else 0)

    def play_sample(self) -> None:
        """A short sentence in the chosen voice and speaker, through the app's preview."""
        voice_id = self.voice.currentData() or ""
        voice = self.voices.get(voice_id)
        self.sampleRequested.emit(voice_id, self.speaker.currentData(), voice.language if voice else "")

    @staticmethod
    def _spin(bounds: tuple[float, float], value: float, step: float, suffix: str) -> QDoubleSpinBox:
        spin = QDoubleSpinBox()
        spin.setRange(*bounds)
        spin.setSingleStep(step)
        spin.setSuffix(suffix)
        spin.setValue(value)
        return spin

    def casting(self) -> Casting:
        speaker = self.speaker.currentData()
        return Casting(self.voice.currentData() or "", None if speaker is None else int(speaker),
                       Performance(round(self.pitch.value(), 2), round(self.pace.value(), 3),
                                   round(self.expressive.value(), 2)))


def install_cast_dock(window: Any, controller: CastController | None = None) -> CastPanel:
    """Add the Cast dock to the main window, and "Spoken by..." to the tree's menu."""
    ctl = controller or CastController(window.session, window)
    panel = CastPanel()
    window.cast_ctl = ctl
    window.docks["cast"] = window._dock("Cast", panel, Qt.DockWidgetArea.RightDockWidgetArea)
    window.tabifyDockWidget(window.docks["readouts"], window.docks["cast"])  # a tab beside Takes and Book progress
    window.docks["readouts"].raise_()
    ctl.viewChanged.connect(panel.set_view)
    panel.enabledChanged.connect(ctl.set_enabled)
    panel.castingChosen.connect(ctl.set_casting)
    panel.mergeChosen.connect(ctl.merge)
    panel.renameChosen.connect(ctl.rename)
    panel.splitChosen.connect(ctl.split)
    panel.review.chosen.connect(ctl.set_speaker)
    session = window.session

    def narrator_language() -> str:
        return (session.snapshot.language if session.snapshot else "") or "en"

    def sample_line(member: Any) -> None:  # a CastMember: its first line as the render will voice it
        lang = narrator_language()
        voice = member.casting.voice_id or session.voice_for(lang)
        session.preview.play_text(member.first_line, lang, voice, f"sample: {member.name}", member.casting)

    def speaker_sample(voice_id: str, speaker: int | None, language: str) -> None:
        lang = language or narrator_language()
        voice = voice_id or session.voice_for(lang)
        label = f"sample: {voice}" + (f" speaker {speaker}" if speaker is not None else "")
        text = SAMPLE_TEXT.get(lang.split("_")[0].split("-")[0].lower(), SAMPLE_TEXT["en"])
        session.preview.play_text(text, lang, voice, label,
                                  Casting(voice_id, speaker))

    panel.sampleLine.connect(sample_line)
    panel.speakerSample.connect(speaker_sample)

    def spoken_by(node: Any) -> None:
        names = [m.name for m in panel.view.members] + [NARRATOR]
        current = names.index(node.speaker) if node.speaker in names else len(names) - 1
        name, ok = QInputDialog.getItem(window, "Spoken by", f"Who says \u201c{node.text[:60]}\u201d?", names,
                                        current, True)
        if ok and name.strip():
            ctl.set_speaker(node.id, "" if name.strip() == NARRATOR else name.strip())

    window.book.speakerRequested.connect(spoken_by)
    return panel
