"""Voices & presets: the default voice, a voice per language, the preset, and where
it runs (this computer or Triton servers, :mod:`studio.ui.triton_panel`).

Why one dialog: all three change the project's cache keys (every sentence they
touch renders again, the old audio stays cached), so they are chosen together and
saved in one step. Machine facts (voices, preset availability with the reason,
benchmark figures) are gathered in the background and filled in when they arrive.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QTableWidget,
    QTabWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from studio.core.errors import StudioError
from studio.jobs.triton import make_target
from studio.project.settings import ProjectSettings
from studio.qt.facts import MachineFacts, PresetInfo
from studio.ui.common import SAMPLE_TEXT, language_label
from studio.ui.triton_panel import TritonPanel

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

    def __init__(self, settings: ProjectSettings, book_languages: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Voices & presets")
        self.resize(860, 520)
        self.settings = settings
        self.languages = sorted(set(book_languages) | set(settings.language_voices))
        self.facts: MachineFacts | None = None

        self.default_voice = QComboBox()
        self.default_voice.addItem(settings.voice_id, settings.voice_id)
        sample = QPushButton("\u25b6 Sample")
        sample.setToolTip("Hear a short sentence in this voice")
        sample.clicked.connect(lambda: self._sample(self.default_voice.currentData(), None))
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

        self.presets = QTreeWidget()
        self.presets.setHeaderLabels(["Preset", "Engine", "Runs here", "Speed (measured)", "Quality (measured)"])
        self.presets.setRootIsDecorated(False)
        header = self.presets.header()
        for col, width in enumerate((130, 170, 110, 150)):
            header.resizeSection(col, width)
        header.setStretchLastSection(True)
        self.presets.currentItemChanged.connect(lambda item, _old: self._describe(item))
        self.preset_details = QLabel()
        self.preset_details.setWordWrap(True)
        self.preset_details.setTextFormat(Qt.TextFormat.RichText)
        self.preset_details.setMinimumHeight(90)
        self.preset_details.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.bench_note = QLabel("Checking presets on this machine\u2026")
        self.bench_note.setWordWrap(True)
        presets_tab = QWidget()
        pl = QVBoxLayout(presets_tab)
        pl.addWidget(QLabel("Changing the preset renders sentences again (the old audio stays cached)."))
        pl.addWidget(self.presets, 1)
        pl.addWidget(self.preset_details)
        pl.addWidget(self.bench_note)

        self.tabs = QTabWidget()
        self.tabs.addTab(voices_tab, "Voices")
        self.tabs.addTab(presets_tab, "Preset")
        self.triton = TritonPanel(settings.triton)
        self.tabs.addTab(self.triton, "Servers")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)

    def set_facts(self, facts: MachineFacts) -> None:
        """Fill voices and presets once the background check is done."""
        self.facts = facts
        current = self.default_voice.currentData()
        self.default_voice.clear()
        for v in facts.voices:
            self.default_voice.addItem(f"{v.name} \u2014 {v.id}", v.id)
        if self.default_voice.findData(current) < 0:
            self.default_voice.addItem(f"{current} (not installed)", current)
        self.default_voice.setCurrentIndex(self.default_voice.findData(current))
        for lang, combo in self.combos.items():
            chosen = combo.currentData()
            combo.clear()
            combo.addItem(DEFAULT_LABEL, "")
            for v in sorted(facts.voices, key=lambda v: (v.family != lang, v.id)):
                mark = "" if v.family == lang else f"  ({v.language} voice)"
                combo.addItem(f"{v.name} \u2014 {v.id}{mark}", v.id)
            at = combo.findData(chosen)
            combo.setCurrentIndex(max(0, at))
        self.presets.clear()
        default_item = QTreeWidgetItem(["(engine default)", self.settings.backend, "yes", "", ""])
        default_item.setData(0, Qt.ItemDataRole.UserRole, "")
        default_item.setData(1, Qt.ItemDataRole.UserRole + 1,
                             f"<b>Engine default</b> ({self.settings.backend}, no preset): what this project used so far.")
        self.presets.addTopLevelItem(default_item)
        for info in facts.presets:
            self.presets.addTopLevelItem(self._preset_item(info))
        for i in range(self.presets.topLevelItemCount()):
            item = self.presets.topLevelItem(i)
            if item.data(0, Qt.ItemDataRole.UserRole) == self.settings.preset:
                self.presets.setCurrentItem(item)
        where = f"Figures from {facts.bench_path}." if facts.bench_path and not facts.bench_note else ""
        self.bench_note.setText(" ".join(x for x in (where, facts.bench_note.capitalize() if facts.bench_note else "") if x))

    def _preset_item(self, info: PresetInfo) -> QTreeWidgetItem:
        b = info.bench
        speed = "" if b is None else (b.error and "failed") or (f"{b.x_real_time:.1f}\u00d7 (RTF {b.rtf:.3f})" if b.x_real_time and b.rtf else "")
        quality = "" if b is None or b.error else " ".join(x for x in (
            f"corr. {b.quality:.3f}" if b.quality is not None else "",
            f"floor {b.noise_floor_dbfs:.0f} dB" if b.noise_floor_dbfs is not None else "") if x)
        item = QTreeWidgetItem([info.name, f"{info.engine}, {info.device}, {info.precision}",
                                "yes" if info.available else "no", speed or "not measured", quality])
        item.setData(0, Qt.ItemDataRole.UserRole, info.name)
        item.setData(1, Qt.ItemDataRole.UserRole, info.backend)
        measured = b.summary() if b is not None else "not measured yet (run <code>studio bench</code>)"
        why = f"runs here: {info.reason}" if info.available else f"<span style='color:#c62828'>unavailable: {info.reason}</span>"
        item.setData(1, Qt.ItemDataRole.UserRole + 1,
                     f"<b>{info.name}</b> \u2014 {why}<br>Measured here: {measured}<br>{info.summary}")
        item.setToolTip(2, info.reason)
        if not info.available:
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            for col in range(5):
                item.setForeground(col, self.palette().placeholderText())
        return item

    def _describe(self, item: QTreeWidgetItem | None) -> None:
        self.preset_details.setText("" if item is None else str(item.data(1, Qt.ItemDataRole.UserRole + 1) or ""))

    def chosen_settings(self) -> ProjectSettings:
        mapping = {lang: c.currentData() for lang, c in self.combos.items() if c.currentData()}
        changes: dict[str, object] = {"voice_id": self.default_voice.currentData() or self.settings.voice_id,
                                      "language_voices": mapping, "unvoiced": self.unvoiced.currentData()}
        item = self.presets.currentItem()
        if item is not None and item.flags() & Qt.ItemFlag.ItemIsSelectable:  # unavailable ones are not
            preset = item.data(0, Qt.ItemDataRole.UserRole) or ""
            changes["preset"] = preset
            if preset:
                changes["backend"] = item.data(1, Qt.ItemDataRole.UserRole) or self.settings.backend
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
