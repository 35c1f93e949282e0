"""The Preset tab of Voices & presets: every preset in plain words, the one recommended
for this computer, what was measured here, and "Measure on this machine".

Why plain words first: a producer picks "Fast on CPU", not ``int8-cpu``; the
technical name stays as the detail, and so does the raw reason a preset cannot run
(tooltip and details), while the plain reason is always visible in its row. The
recommendation comes from :func:`studio.stack.preset_advice.recommend`, the reasons
from :func:`studio.desktop.preset_words.plain_reason`, the figures from the benchmark
file (:mod:`studio.desktop.facts`); this widget only shows them.
"""

from __future__ import annotations

from dataclasses import replace
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.stack.preset_advice import PresetFacts, Recommendation, recommend
from studio.project.settings import ProjectSettings
from studio.desktop.facts import BenchFigures, MachineFacts, PresetInfo, presets_for_voice
from studio.desktop.measure import ABOUT, MeasureProgress, MeasureResult, PresetMeasurer
from studio.desktop.messages import ErrorInfo
from studio.desktop.preset_words import default_row_name, engine_default_name, plain_name, plain_reason

COLUMNS = ("Preset", "Technical name", "Runs here", "Speed (measured)", "Quality (measured)")
RECOMMENDED = "\u2605 recommended"
NOT_MEASURED = "not measured yet"
REFERENCE = "fp32-cpu"  # what the benchmark compares quality against
QUALITY_TIP = (f"How closely the audio matches {plain_name(REFERENCE)} (log-mel correlation on the lowest "
               "sentence: 1.000 is identical) and the noise floor in pauses (lower is quieter)")
_NAME, _BACKEND, _DETAILS = Qt.ItemDataRole.UserRole, Qt.ItemDataRole.UserRole + 1, Qt.ItemDataRole.UserRole + 2
_CHOICE = Qt.ItemDataRole.UserRole + 3  # what choosing the row stores: "" on the engine default's row


def speed_text(b: BenchFigures | None) -> str:
    if b is None:
        return NOT_MEASURED
    if b.error:
        return "measuring failed"
    return f"{b.x_real_time:.1f}\u00d7 real time" if b.x_real_time else NOT_MEASURED


def quality_text(name: str, b: BenchFigures | None) -> str:
    if b is None or b.error:
        return "" if b is not None else NOT_MEASURED
    if name == REFERENCE:
        return "the reference"
    parts = [f"{b.quality:.3f} match with {plain_name(REFERENCE)}" if b.quality is not None else "",
             f"floor {b.noise_floor_dbfs:.0f} dB" if b.noise_floor_dbfs is not None else ""]
    return ", ".join(p for p in parts if p) or NOT_MEASURED


class PresetTable(QWidget):
    def __init__(self, measurer: PresetMeasurer | None = None, project_folder: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.measurer = measurer
        self.project_folder = project_folder
        self.facts: MachineFacts | None = None
        self.settings: ProjectSettings | None = None
        self.recommendation: Recommendation | None = None
        #: a row was chosen by the producer (not filled in from the project or the voice)
        self.picked = False
        self._filling = False

        self.recommended = QLabel("Checking presets on this computer\u2026")
        self.recommended.setWordWrap(True)
        self.recommended.setTextFormat(Qt.TextFormat.RichText)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        header = self.tree.header()
        for col, width in enumerate((215, 110, 300, 125)):
            header.resizeSection(col, width)
        header.setStretchLastSection(True)
        self.tree.currentItemChanged.connect(lambda item, _old: self._current(item))
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setMinimumHeight(90)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.bench_note = QLabel("")
        self.bench_note.setWordWrap(True)

        self.measure_btn = QPushButton("Measure on this machine")
        self.measure_btn.setToolTip("Time every preset that runs here on a few long sentences and compare its "
                                    "sound with Best quality (the same measurement as `studio bench`, shorter)")
        self.measure_btn.clicked.connect(self.start_measuring)
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.clicked.connect(self.cancel_measuring)
        self.progress = QProgressBar()
        self.measure_note = QLabel(f"Takes {ABOUT}; rendering pauses meanwhile.")
        self.measure_note.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.measure_btn)
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_btn)
        self.progress.hide()
        self.cancel_btn.hide()
        self.measure_btn.setEnabled(False)  # until the presets that run here are known
        self.measure_btn.setVisible(measurer is not None)

        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Changing the preset renders sentences again (the old audio stays cached)."))
        layout.addWidget(self.recommended)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.details)
        layout.addWidget(self.bench_note)
        layout.addLayout(row)
        layout.addWidget(self.measure_note)
        if measurer is not None:
            measurer.progress.connect(self._progress)
            measurer.finished.connect(self._measured)
            measurer.failed.connect(self._measure_failed)
            measurer.cancelled.connect(self._measure_cancelled)
            if measurer.running:  # started from an earlier dialog: show it still going
                self._busy(True, "Measuring\u2026")

    # ------------------------------------------------------------ facts

    def set_facts(self, facts: MachineFacts, settings: ProjectSettings) -> None:
        """Show every preset; keeps the row the user picked (else ``settings``' preset)."""
        self._filling = True
        try:
            self._fill(facts, settings)
        finally:
            self._filling = False

    def _fill(self, facts: MachineFacts, settings: ProjectSettings) -> None:
        chosen = self.chosen()
        keep = chosen[0] if self.picked and chosen is not None else settings.preset
        facts = presets_for_voice(facts, settings.voice_id)
        self.facts, self.settings = facts, settings
        self.recommendation = recommend([
            PresetFacts(p.name, p.available, None if p.bench is None or p.bench.error else p.bench.x_real_time,
                        None if p.bench is None or p.bench.error else p.bench.whole_speed)
            for p in facts.presets
        ])
        rec = self.recommendation
        self.recommended.setText(f"Recommended for this computer: <b>{escape(plain_name(rec.preset))}</b> "
                                 f"({rec.preset}) \u2014 {escape(rec.why)}")
        self.tree.clear()
        # a project without a preset renders with its engine's default preset: that preset's own row says
        # so (one "Best quality" in the list, not two), and choosing it keeps "no preset" (nothing re-renders)
        engine_default = "" if settings.preset else engine_default_name(settings.backend)
        runs = next((v.presets for v in facts.voices if v.id == settings.voice_id), ())
        if engine_default and runs and engine_default not in runs:
            # the voice cannot run its backend's default: it renders with the first of its own that runs here
            engine_default = next((p.name for p in facts.presets if p.available), "")
        if engine_default and not any(p.name == engine_default and p.available for p in facts.presets):
            default = QTreeWidgetItem([*default_row_name(settings.backend), "Yes", "", ""])
            default.setData(0, _NAME, "")
            default.setData(0, _DETAILS, f"<b>{escape(default_row_name(settings.backend)[0])}</b> "
                                         f"({settings.backend} engine, no preset chosen): what this project renders "
                                         "with now.")
            self.tree.addTopLevelItem(default)
        for info in facts.presets:
            item = self._item(info, info.name == rec.preset)
            if info.name == engine_default and info.available:
                item.setText(0, item.text(0).replace(plain_name(info.name),
                                                     f"{plain_name(info.name)} \u2014 engine default", 1))
                item.setData(0, _CHOICE, "")
            self.tree.addTopLevelItem(item)
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if self._choice(item) == keep and item.flags() & Qt.ItemFlag.ItemIsSelectable:
                self.tree.setCurrentItem(item)
        if not facts.bench_path:
            self.bench_note.setText("Nothing measured on this computer yet: press Measure on this machine "
                                    "(or run `studio bench`).")
        else:
            self.bench_note.setText(facts.bench_note[:1].upper() + facts.bench_note[1:] if facts.bench_note
                                    else f"Figures from {facts.bench_path}.")
        runnable = self.runnable()
        self.measure_btn.setEnabled(bool(runnable) and not (self.measurer and self.measurer.running))
        self.measure_note.setText(f"Measures the {len(runnable)} preset(s) that run here on four long sentences. "
                                  f"Takes {ABOUT}; rendering pauses meanwhile.")

    def _item(self, info: PresetInfo, recommended: bool) -> QTreeWidgetItem:
        b = info.bench
        name = plain_name(info.name) + (f"   {RECOMMENDED}" if recommended else "")
        plain = info.plain_reason or plain_reason(info.missing)
        runs = "Yes" if info.available else plain
        item = QTreeWidgetItem([name, info.name, runs, speed_text(b), quality_text(info.name, b)])
        item.setData(0, _NAME, info.name)
        item.setData(0, _BACKEND, info.backend)
        measured = escape(b.summary()) if b is not None else "not measured yet (press Measure on this machine)"
        why = (f"runs here: {escape(info.reason)}" if info.available else
               f"<span style='color:#c62828'>{escape(plain)}</span> "
               f"<small>({escape(info.reason)})</small>")
        item.setData(0, _DETAILS, f"<b>{escape(plain_name(info.name))}</b> (<code>{info.name}</code>: {info.engine}, "
                                  f"{info.device}, {info.precision}) \u2014 {why}<br>Measured here: {measured}<br>"
                                  f"{escape(info.summary)}")
        item.setToolTip(0, info.summary)
        item.setToolTip(4, QUALITY_TIP)
        item.setToolTip(2, info.reason)  # the raw reason, for whoever fixes the install
        if recommended:
            font = item.font(0)
            font.setBold(True)
            item.setFont(0, font)
        if not info.available:
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            for col in range(len(COLUMNS)):
                item.setForeground(col, self.palette().placeholderText())
        return item

    def _current(self, item: QTreeWidgetItem | None) -> None:
        self.picked = self.picked or not self._filling
        self.details.setText("" if item is None else str(item.data(0, _DETAILS) or ""))

    def chosen(self) -> tuple[str, str] | None:
        """``(preset, backend)`` of the selected row (``""`` preset: engine default); None: nothing chosen."""
        item = self.tree.currentItem()
        if item is None or not item.flags() & Qt.ItemFlag.ItemIsSelectable:
            return None
        return self._choice(item), str(item.data(0, _BACKEND) or "")

    @staticmethod
    def _choice(item: QTreeWidgetItem) -> str:
        choice = item.data(0, _CHOICE)
        return str(item.data(0, _NAME) or "") if choice is None else str(choice)

    def row_of(self, preset: str) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            if self.tree.topLevelItem(i).data(0, _NAME) == preset:
                return self.tree.topLevelItem(i)
        return None

    # ------------------------------------------------------------ measuring

    def runnable(self) -> list[str]:
        return [p.name for p in self.facts.presets if p.available] if self.facts else []

    def start_measuring(self) -> None:
        if self.measurer is None or self.facts is None or self.settings is None:
            return
        voice = next((v for v in self.facts.voices if v.id == self.settings.voice_id), None)
        voice_id = voice.id if voice is not None and voice.benchable else None  # else the bundled voice
        if self.measurer.start(self.runnable(), voice_id, self.project_folder):
            self._busy(True, "Starting\u2026")

    def cancel_measuring(self) -> None:
        if self.measurer is not None:
            self.measurer.cancel()
            self.progress.setFormat("Cancelling\u2026")

    def _busy(self, busy: bool, text: str = "") -> None:
        self.measure_btn.setEnabled(not busy and bool(self.runnable()))
        self.progress.setVisible(busy)
        self.cancel_btn.setVisible(busy)
        if busy:
            self.progress.setRange(0, 0)
            self.progress.setFormat(text)

    def _progress(self, p: MeasureProgress) -> None:
        self.progress.setRange(0, p.total)
        self.progress.setValue(p.index - 1)
        self.progress.setFormat(f"Measuring {plain_name(p.preset)} ({p.preset}): {p.index} of {p.total}\u2026")

    def _measured(self, result: MeasureResult) -> None:
        self._busy(False)
        if self.facts is not None and self.settings is not None:
            presets = tuple(replace(p, bench=result.figures.get(p.name)) for p in self.facts.presets)
            self.set_facts(replace(self.facts, presets=presets, bench_path=result.path, bench_note=result.note),
                           self.settings)
            self.measure_note.setText(f"Measured in {result.seconds:.0f} s. " + self.measure_note.text())

    def _measure_failed(self, error: ErrorInfo) -> None:
        self._busy(False)
        self.measure_note.setText(f"Measuring failed: {error.message}")

    def _measure_cancelled(self) -> None:
        self._busy(False)
        self.measure_note.setText("Measuring was cancelled; the figures shown are unchanged.")
