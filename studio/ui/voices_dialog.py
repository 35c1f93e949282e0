"""Voices & presets: the default voice, a voice per language, the preset, and where
it runs (this computer or Triton servers, :mod:`studio.ui.triton_panel`).

Why one dialog: all three change the project's cache keys (every sentence they
touch renders again, the old audio stays cached), so they are chosen together and
saved in one step. Machine facts (voices, preset availability with the reason,
benchmark figures) are gathered in the background and filled in when they arrive.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QTableWidget,
    QTabWidget, QVBoxLayout, QWidget,
)

from studio.core.errors import StudioError
from studio.stack.triton_repository import make_target
from studio.project.settings import ProjectSettings
from studio.desktop.facts import MachineFacts, VoiceChoice
from studio.desktop.measure import PresetMeasurer
from studio.desktop.voice_library import VoiceLibrary
from studio.ui.common import SAMPLE_TEXT, language_label
from studio.ui.preset_table import PresetTable
from studio.ui.triton_panel import TritonPanel
from studio.ui.voice_library_panel import VoiceLibraryPanel
from studio.ui.voice_mixer_panel import VoiceMixerPanel

DEFAULT_LABEL = "(project default voice)"


#: the project's policy for passages in a language no voice speaks, in plain words
UNVOICED_CHOICES = (
    ("native", "Book's voice, that language's pronunciation (accented, intelligible)"),
    ("book", "Book's voice, read as if in the book's language"),
    ("skip", "Leave it silent and list it"),
)

class VoicesDialog(QDialog):
    applied = Signal(object)  # ProjectSettings
    sampleRequested = Signal(str, str, str)  # voice id, language, text

    def __init__(self, settings: ProjectSettings, book_languages: list[str], parent: QWidget | None = None, *,
                 measurer: PresetMeasurer | None = None, project_folder: str | None = None,
                 library: VoiceLibrary | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Voices & presets")
        self.resize(860, 520)
        self.settings = settings
        self.languages = sorted(set(book_languages) | set(settings.language_voices))
        self.facts: MachineFacts | None = None

        self.default_voice = QComboBox()
        self.default_voice.addItem(settings.voice_id, settings.voice_id)
        self._waiting(self.default_voice)
        sample = QPushButton("\u25b6 Sample")
        sample.setToolTip("Hear a short sentence in this voice")
        sample.clicked.connect(lambda: self._sample(self.default_voice.currentData(), None))
        self.default_voice.activated.connect(lambda _i: self._voice_chosen())  # the producer's choice, not a refill
        top = QHBoxLayout()
        top.addWidget(QLabel("Default voice:"))
        top.addWidget(self.default_voice, 1)
        top.addWidget(sample)
        self.table = QTableWidget(len(self.languages), 3)
        self.table.setHorizontalHeaderLabels(["Language in the book", "Voice", ""])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().resizeSection(0, 200)
        self.combos: dict[str, QComboBox] = {}
        for row, lang in enumerate(self.languages):
            self.table.setCellWidget(row, 0, QLabel(" " + language_label(lang)))
            combo = QComboBox()
            combo.addItem(DEFAULT_LABEL, "")
            mapped = settings.language_voices.get(lang)
            if mapped:
                combo.addItem(mapped, mapped)
                combo.setCurrentIndex(1)
            self.combos[lang] = combo
            self._waiting(combo)
            self.table.setCellWidget(row, 1, combo)
            btn = QPushButton("\u25b6")
            btn.setToolTip(f"Hear this voice speak {language_label(lang)}")
            btn.clicked.connect(lambda _=False, c=combo, lg=lang: self._sample(c.currentData() or self.default_voice.currentData(), lg))
            self.table.setCellWidget(row, 2, btn)
        self.table.horizontalHeader().resizeSection(2, 40)
        voices_tab = QWidget()
        vl = QVBoxLayout(voices_tab)
        vl.addLayout(top)
        vl.addWidget(QLabel("Passages in another language are spoken by the voice chosen for it:"))
        vl.addWidget(self.table, 1)
        self.unvoiced = QComboBox()
        for value, label in UNVOICED_CHOICES:
            self.unvoiced.addItem(label, value)
        self.unvoiced.setCurrentIndex(max(0, self.unvoiced.findData(settings.unvoiced)))
        policy = QHBoxLayout()
        policy.addWidget(QLabel("A language no voice speaks:"))
        policy.addWidget(self.unvoiced, 1)
        vl.addLayout(policy)

        self.presets = PresetTable(measurer, project_folder)

        self.tabs = QTabWidget()
        self.tabs.addTab(voices_tab, "Voices")
        self.tabs.addTab(self.presets, "Preset")
        self.triton = TritonPanel(settings.triton)
        self.tabs.addTab(self.triton, "Servers")
        self.library: VoiceLibraryPanel | None = None
        self.mixer: VoiceMixerPanel | None = None
        if library is not None:  # installed voices and what can be fetched: download, remove; the mixer
            library.setParent(self)
            self.finished.connect(lambda _r: library.cancel())  # a download stops with the window
            self.finished.connect(lambda _r: library.stop_sound())  # and a blend's sample
            self.library = VoiceLibraryPanel(library)
            self.tabs.insertTab(1, self.library, "Get voices")
            self.library.sampleRequested.connect(lambda vid: self._sample(vid, None))
            library.installed.connect(self._voice_added)
            library.removed.connect(self._voice_removed)
            self.mixer = VoiceMixerPanel(library)
            self.tabs.insertTab(2, self.mixer, "Mix voices")
            library.load()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)

    @staticmethod
    def _waiting(combo: QComboBox) -> None:
        """Closed until the installed voices are read: a list opened with its one item stayed a
        one-line sliver when the voices arrived under it."""
        combo.setEnabled(False)
        combo.setToolTip("Reading the installed voices\u2026")
        combo.setMaxVisibleItems(16)
        combo.setMinimumContentsLength(24)

    def set_facts(self, facts: MachineFacts) -> None:
        """Fill voices and presets once the background check is done."""
        self.facts = facts
        for combo in (self.default_voice, *self.combos.values()):
            combo.setEnabled(True)
            combo.setToolTip("")
        current = self.default_voice.currentData()
        self.default_voice.clear()
        for v in facts.voices:
            speaks = f" \u00b7 speaks {v.languages}" if len(v.speaks) > 1 else ""  # as `studio voices` lists them
            self.default_voice.addItem(f"{v.name} \u2014 {v.id}{speaks}", v.id)
        if self.default_voice.findData(current) < 0:
            self.default_voice.addItem(f"{current} (not installed)", current)
        self.default_voice.setCurrentIndex(self.default_voice.findData(current))
        for lang, combo in self.combos.items():
            chosen = combo.currentData()
            combo.clear()
            combo.addItem(DEFAULT_LABEL, "")
            for v in sorted(facts.voices, key=lambda v: (not v.speaks_language(lang), v.id)):
                mark = "" if v.speaks_language(lang) else f"  ({v.languages or v.language} voice)"
                combo.addItem(f"{v.name} \u2014 {v.id}{mark}", v.id)
            at = combo.findData(chosen)
            combo.setCurrentIndex(max(0, at))
        self._voice_chosen()
        if self.mixer is not None:
            self.mixer.set_voices(facts.voices)

    def _voice_chosen(self) -> None:
        """The Preset tab follows the voice chosen here, before it is saved: its presets, not the
        project's saved voice's (a Kokoro voice chosen showed the Piper voice's presets), and with
        no preset picked, the one that voice gets on this computer (measured fastest here)."""
        if self.facts is not None:
            voice = self.default_voice.currentData() or self.settings.voice_id
            settings = self.settings.with_changes(voice_id=voice)
            choice = next((v for v in self.facts.voices if v.id == voice), None)
            if voice != self.settings.voice_id and choice is not None and choice.default_preset:
                settings = settings.with_changes(preset=choice.default_preset)
            self.presets.set_facts(self.facts, settings)

    def _voice_added(self, choice: VoiceChoice) -> None:
        """A voice just downloaded can be chosen at once (default or for a language)."""
        if self.facts is not None and all(v.id != choice.id for v in self.facts.voices):
            self.set_facts(replace(self.facts, voices=(*self.facts.voices, choice)))

    def _voice_removed(self, voice_id: str) -> None:
        if self.facts is not None:
            self.set_facts(replace(self.facts, voices=tuple(v for v in self.facts.voices if v.id != voice_id)))

    def chosen_settings(self) -> ProjectSettings:
        mapping = {lang: c.currentData() for lang, c in self.combos.items() if c.currentData()}
        changes: dict[str, object] = {"voice_id": self.default_voice.currentData() or self.settings.voice_id,
                                      "language_voices": mapping, "unvoiced": self.unvoiced.currentData()}
        chosen = self.presets.chosen()
        if chosen is not None:  # None: nothing selectable chosen (unavailable ones are not)
            changes["preset"], backend = chosen
            if backend:
                changes["backend"] = backend
        changes["triton"] = make_target(**self.triton.fields(), base=self.settings.triton)  # StudioError: bad address
        return self.settings.with_changes(**changes)

    def _sample(self, voice_id: str | None, language: str | None) -> None:
        if not voice_id:
            return
        voice = next((v for v in (self.facts.voices if self.facts else ()) if v.id == voice_id), None)
        lang = language or (voice.family if voice else "en")
        self.sampleRequested.emit(voice_id, lang, SAMPLE_TEXT.get(lang, SAMPLE_TEXT["en"]))

    def _save(self) -> None:
        try:
            chosen = self.chosen_settings()
        except StudioError as err:  # a mistyped server address: say so where it was typed
            self.tabs.setCurrentWidget(self.triton)
            self.triton.show_error(str(err))
            return
        self.applied.emit(chosen)
        self.accept()
