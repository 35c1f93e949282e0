"""Export chapters into a folder, in the background, with progress: plain WAV or
MP3 as rendered, or publish-ready files (M4B with chapters, MP3, FLAC, Opus, WAV)
mastered, tagged and checked, with the measurements shown -- a complete package:
opening and closing credits (their wording editable), a retail sample from a chosen
chapter, and the cover checked or made square (pad or crop).

Why the dialog only offers complete chapters: export never synthesizes (what is
exported is exactly what was rendered and checked), so a chapter with pending or
failed sentences is listed but disabled, with the reason. When the files are
written the dialog offers to open the folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QDateTime, QTimer, QUrl, Qt, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QFileDialog, QFrame, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget,
    QListWidgetItem, QMessageBox, QPlainTextEdit, QProgressBar, QPushButton, QScrollArea, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from studio.core.words import counted
from studio.ui.common import browse_row
from studio.project.numbering import chapter_label
from studio.delivery.manifest import MANIFEST_NAME
from studio.desktop.export_words import in_app_words
from studio.desktop.messages import ErrorInfo, ExportProgress, PackageChoices
from studio.desktop.snapshot import BookSnapshot, estimate
from studio.ui.book_model import BookModel
from studio.ui.row_words import fmt_duration


#: formats that only exist as publish-ready output (mastered and checked)
PUBLISH_ONLY = ("m4b", "flac", "opus")
#: publish-ready unless the producer says otherwise: MP3 is what listeners and shops get, so it is
#: mastered and checked by default; WAV is usually an intermediate for an editor, so it stays as rendered
PUBLISH_DEFAULT = {"mp3": True, "wav": False}
RESULT_COLUMNS = ("File", "Length", "RMS", "True peak", "Noise floor", "Loudness", "Check", "Holds")


def free_folder(folder: Path) -> Path:
    """A folder beside ``folder`` that holds no export: ``"Moby Dick - audio 2"``, ``3``..."""
    n = 2
    while (folder.with_name(f"{folder.name} {n}") / MANIFEST_NAME).exists():
        n += 1
    return folder.with_name(f"{folder.name} {n}")


class ExportDialog(QDialog):
    exportRequested = Signal(str, str, object)  # folder, format, chapter indexes
    publishRequested = Signal(str, str, object, object)  # folder, format, chapter indexes, PackageChoices
    creditsWanted = Signal(object)  # PackageChoices: the credits' default text for them, to show and edit

    def __init__(self, snapshot: BookSnapshot, model: BookModel, folder: str, parent: QWidget | None = None,
                 open_url: Callable[[QUrl], object] = QDesktopServices.openUrl) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export chapters")
        self.resize(640, 480)
        self.open_url = open_url
        self.result_progress: ExportProgress | None = None
        self._replacing = ""  # the folder the producer said to replace (asked before an earlier export is)
        self.replace_box: QMessageBox | None = None
        self.last_progress: ExportProgress | None = None  # the last count shown, in its unit
        self.folder = QLineEdit(folder)
        row = browse_row(self.folder, self._browse)
        self.format = QComboBox()
        self.format.addItem("M4B audiobook (one file, chapter markers, cover)", "m4b")
        self.format.addItem("MP3 (one file per chapter)", "mp3")
        self.format.addItem("WAV (16-bit PCM)", "wav")
        self.format.addItem("FLAC (lossless)", "flac")
        self.format.addItem("Opus", "opus")
        self.publish = QCheckBox("Publish-ready: master (44.1 kHz, -20 dB RMS, peaks under -3 dB, room tone), "
                                 "tag, write subtitles and check the ACX rules")
        self._publish_choice = dict(PUBLISH_DEFAULT)  # for WAV/MP3; the other formats are always publish-ready
        self.cover = QLineEdit()
        self.cover.setPlaceholderText("the EPUB's cover, if the book has one")
        cover_row = browse_row(self.cover, self._browse_cover)
        form = QFormLayout()
        form.addRow("Folder:", row)
        form.addRow("Format:", self.format)
        form.addRow("", self.publish)
        form.addRow("Cover art:", cover_row)
        self.cover_fit = QComboBox()
        self.cover_fit.addItem("as it is (warn when stores would refuse it)", "")
        self.cover_fit.addItem("pad to a square", "pad")
        self.cover_fit.addItem("crop to a square", "crop")
        form.addRow("Cover shape:", self.cover_fit)
        self.credits = QCheckBox("Opening and closing credits, spoken with the project's voice")
        self.credits.setChecked(True)
        self.opening = QPlainTextEdit()
        self.opening.setPlaceholderText("Default: the title. Written by <author>. Narrated by a synthetic voice.")
        self.closing = QPlainTextEdit()
        self.closing.setPlaceholderText("Default: The end. Title, author, narrator; copyright; the disclosure that "
                                        "the narration is synthetic.")
        for box in (self.opening, self.closing):
            box.setMaximumHeight(72)
        self._filled = {"opening": "", "closing": ""}  # the default text last put in each box
        self.producer = QLineEdit()
        self.producer.setPlaceholderText("you or your company: \u201cRecording copyright <year> by \u2026\u201d")
        self.producer.setToolTip("Who holds the recording's copyright, for the closing credits. The book's own "
                                 "rights (public domain, a publisher's copyright) come from the book itself.")
        self._credits_timer = QTimer(self, singleShot=True, interval=250, timeout=self.request_credits)
        self.producer.textChanged.connect(lambda _t: self._credits_timer.start())
        self.credits.toggled.connect(lambda on: (self.opening.setEnabled(on), self.closing.setEnabled(on)))
        form.addRow("", self.credits)
        form.addRow("Recording by:", self.producer)
        form.addRow("Opening credits:", self.opening)
        form.addRow("Closing credits:", self.closing)
        self.sample = QCheckBox("Retail sample (about 3 minutes, its own file)")
        self.sample.setChecked(True)
        self.sample_chapter = QComboBox()
        self.sample_chapter.addItem("the first prose chapter", None)
        for c in snapshot.chapters:
            self.sample_chapter.addItem(chapter_label(c.index, c.display_name, status=False), c.index)
        self.sample.toggled.connect(self.sample_chapter.setEnabled)
        sample_row = QHBoxLayout()
        sample_row.addWidget(self.sample)
        sample_row.addWidget(self.sample_chapter, 1)
        form.addRow("", sample_row)
        self.format.currentIndexChanged.connect(lambda *_: self._sync_publish())
        self.publish.toggled.connect(self._publish_toggled)

        self.chapters = QListWidget()
        for c in snapshot.chapters:
            counts = model.counts(c.index)
            total = sum(counts.values())
            done = counts.get("done", 0)
            nodes = [model.sentence(s.id) or s for s in c.sentences]
            seconds = estimate(c, snapshot.timing, nodes)  # the tree's figure: pauses included, as the file plays
            complete = done == total and total > 0
            why = fmt_duration(seconds) if complete else (
                f"{counts.get('failed', 0)} failed" if counts.get("failed") else f"{total - done} of {total} not rendered")
            item = QListWidgetItem(f"{c.label}  \u2014  {why}")
            item.setData(Qt.ItemDataRole.UserRole, c.index)
            if complete:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if c.included else Qt.CheckState.Unchecked)
            else:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
                item.setToolTip("Render this chapter completely before exporting it")
            self.chapters.addItem(item)

        self.proof_line = QLabel("Proof-listening: reading\u2026")
        self.proof_line.setWordWrap(True)
        self.require_proof = QCheckBox("Only when proof-listened: refuse if a chapter has sentences not listened "
                                       "to or still to review")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("ready")
        self.status = QLabel("Only fully rendered chapters can be exported.")
        self.status.setWordWrap(True)
        self.results = QTableWidget(0, len(RESULT_COLUMNS))
        self.results.setHorizontalHeaderLabels(RESULT_COLUMNS)
        self.results.horizontalHeader().setStretchLastSection(True)
        self.results.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.results.setVisible(False)
        self.result_published = None  # studio.delivery.publish.PublishResult, when one came back
        self.export_btn = QPushButton("Export")
        self.export_btn.setDefault(True)
        self.export_btn.clicked.connect(self._export)
        self.open_btn = QPushButton("Open folder")
        self.open_btn.setVisible(False)
        self.open_btn.clicked.connect(self.open_folder)
        close = QPushButton("Close")
        close.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.export_btn)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Chapters:"))
        layout.addWidget(self.chapters, 1)
        layout.addWidget(self.proof_line)
        layout.addWidget(self.require_proof)
        layout.addWidget(self.progress)
        # the report (warnings, the cover, proof) scrolls in its own box: the finished dialog grew to 721 px
        report = QScrollArea()
        report.setWidgetResizable(True)
        report.setFrameShape(QFrame.Shape.NoFrame)
        report.setWidget(self.status)
        report.setMinimumHeight(2 * self.status.fontMetrics().lineSpacing() + 4)
        self.report_area = report
        lines = self.status.fontMetrics().lineSpacing()
        for box in (self.opening, self.closing, self.results):  # they scroll: 2-3 lines at least
            box.setMinimumHeight(int(2.5 * lines) + 8)
        # the chapters as many rows as they are, up to 8 (141 chapters showed 3 rows)
        row = self.chapters.sizeHintForRow(0) if self.chapters.count() else lines
        self.chapters.setMinimumHeight(min(max(self.chapters.count(), 3), 8) * row + 2 * self.chapters.frameWidth())
        layout.addWidget(report, 1)
        layout.addWidget(self.results, 1)
        layout.addLayout(buttons)
        self._sync_button()
        self._sync_publish()
        self.chapters.itemChanged.connect(lambda *_: self._sync_button())

    def checked_chapters(self) -> list[int]:
        out = []
        for i in range(self.chapters.count()):
            item = self.chapters.item(i)
            if item.flags() & Qt.ItemFlag.ItemIsUserCheckable and item.checkState() == Qt.CheckState.Checked:
                out.append(int(item.data(Qt.ItemDataRole.UserRole)))
        return out

    def set_format(self, fmt: str) -> None:
        self.format.setCurrentIndex(max(0, self.format.findData(fmt)))

    def set_publish(self, on: bool, fmt: str | None = None) -> None:
        """The choice for WAV or MP3 (``fmt``, default the one shown; M4B, FLAC and Opus are
        always publish-ready)."""
        self._publish_choice[fmt or str(self.format.currentData())] = on
        self._sync_publish()

    def publishing(self) -> bool:
        fmt = str(self.format.currentData())
        return fmt in PUBLISH_ONLY or self._publish_choice.get(fmt, False)

    def _publish_toggled(self, on: bool) -> None:
        if self.publish.isEnabled():
            self._publish_choice[str(self.format.currentData())] = on
        self._sync_publish()

    def _sync_publish(self) -> None:
        """M4B, FLAC and Opus are made only publish-ready; WAV and MP3 also plain, as rendered."""
        forced = self.format.currentData() in PUBLISH_ONLY
        self.publish.blockSignals(True)
        self.publish.setEnabled(not forced)
        self.publish.setChecked(self.publishing())
        self.publish.blockSignals(False)
        for widget in (self.cover, self.cover_fit, self.credits, self.opening, self.closing, self.sample,
                       self.sample_chapter, self.producer, self.require_proof):
            widget.setEnabled(self.publishing())
        if self.publishing():
            self.opening.setEnabled(self.credits.isChecked())
            self.closing.setEnabled(self.credits.isChecked())
            self.sample_chapter.setEnabled(self.sample.isChecked())

    def choices(self) -> PackageChoices:
        """The package the producer asked for (credits, sample, cover)."""
        return PackageChoices(self.cover.text().strip(), self.cover_fit.currentData() or "", self.credits.isChecked(),
                              self._own("opening"), self._own("closing"), self.sample.isChecked(),
                              self.sample_chapter.currentData(), self.producer.text().strip(),
                              self.require_proof.isChecked())

    def _own(self, which: str) -> str:
        """The producer's wording, "" while the box still holds the default (it follows the producer's name)."""
        text = getattr(self, which).toPlainText().strip()
        return "" if text == self._filled[which].strip() else text

    def request_credits(self) -> None:
        """Ask for the default credits for the current choices (the main window answers with show_credits)."""
        self.creditsWanted.emit(self.choices())

    def show_credits(self, credits) -> None:  # noqa: ANN001 - studio.delivery.credits.Credits
        """Fill each credits box the producer has not written in with the text the export would speak."""
        for which, text in (("opening", credits.opening), ("closing", credits.closing)):
            box = getattr(self, which)
            if box.toPlainText().strip() in ("", self._filled[which].strip()):
                self._filled[which] = text
                box.setPlainText(text)

    def show_proof_before(self, before) -> None:  # noqa: ANN001 - studio.delivery.export_book.ProofBefore
        """Said before the export: what is still to review or not listened to in the book."""
        self.proof_line.setText(f"Proof-listening: {before.line()}.")
        self.proof_line.setStyleSheet("" if before.clean else "color: #b26a00;")

    def _browse_cover(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Cover art", self.cover.text(), "Images (*.jpg *.jpeg *.png)")
        if path:
            self.cover.setText(path)

    def _sync_button(self) -> None:
        self.export_btn.setEnabled(bool(self.checked_chapters()) and bool(self.folder.text().strip()))

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export to folder", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def _export(self) -> None:
        chapters = self.checked_chapters()
        folder = self.folder.text().strip()
        if not chapters or not folder:
            return
        if (Path(folder) / MANIFEST_NAME).is_file() and folder != self._replacing:
            self._ask_replace(folder)  # a second export never replaces the first's files unasked
            return
        self._replacing = ""
        self.export_btn.setEnabled(False)
        self.open_btn.setVisible(False)
        self.progress.setRange(0, len(chapters))
        self.progress.setValue(0)
        # a publish-ready export counts its parts (credits, a long chapter's pieces): its first report says how many
        self.last_progress = None if self.publishing() else ExportProgress(0, len(chapters))
        self.progress.setFormat(self.last_progress.words if self.last_progress else "starting\u2026")
        self.status.setText("Exporting in the background\u2026 you can keep working.")
        self.results.setVisible(False)
        self.result_progress = self.result_published = None
        if self.publishing():
            self.publishRequested.emit(folder, self.format.currentData(), chapters, self.choices())
        else:
            self.exportRequested.emit(folder, self.format.currentData(), chapters)

    def _ask_replace(self, folder: str) -> None:
        """The folder holds an earlier export (its manifest): replace it, or export into a new folder
        beside it (offered by name), or not at all. Not modal: the window stays usable."""
        earlier = Path(folder) / MANIFEST_NAME
        when = QDateTime.fromSecsSinceEpoch(int(earlier.stat().st_mtime)).toString("yyyy-MM-dd HH:mm")
        beside = free_folder(Path(folder))
        box = QMessageBox(QMessageBox.Icon.Question, "Replace the earlier export?",
                          f"{folder} already holds an export (its {MANIFEST_NAME} was written {when}). Replace it, "
                          f"or export into a new folder beside it, {beside.name}?", QMessageBox.StandardButton.Cancel,
                          self)
        replace_btn = box.addButton("Replace", QMessageBox.ButtonRole.DestructiveRole)
        beside_btn = box.addButton(f"Export to {beside.name}", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(beside_btn)

        def chosen(button) -> None:  # noqa: ANN001
            if button is replace_btn:
                self._replacing = folder
            elif button is beside_btn:
                self.folder.setText(str(beside))
            else:
                return
            self._export()

        box.buttonClicked.connect(chosen)
        self.replace_box = box
        box.open()

    # ------------------------------------------------------------ results (GUI thread)

    def on_progress(self, p: ExportProgress) -> None:
        self.last_progress = p
        self.progress.setRange(0, max(1, p.total))
        self.progress.setValue(p.done)
        self.progress.setFormat(p.words)
        if p.current:
            self.status.setText(f"Writing \u201c{p.current}\u201d\u2026")

    def on_done(self, p: ExportProgress) -> None:
        self.result_progress = p
        self.on_progress(p)
        self.status.setText(f"Wrote {counted(len(p.files), 'file')}, {fmt_duration(p.seconds)} of audio, to {self.folder.text()}.")
        self.open_btn.setVisible(True)
        self.export_btn.setEnabled(True)

    def on_published(self, result, proof: dict | None = None) -> None:  # noqa: ANN001 - a PublishResult
        """Show every file's measurements and ACX verdict (failed rules in full, and as tooltip), the
        warnings in the dialog's words, and the proof summary written into the manifest."""
        self.result_published = result
        self.results.setRowCount(0)
        for f in result.files:
            lv, row = f.levels, self.results.rowCount()
            self.results.insertRow(row)
            verdict = ("pass" if f.acx.passed else "FAIL: " + "; ".join(f.acx.reasons))
            verdict = f"{'ACX' if result.acx_format else 'levels'} {verdict}"
            cells = (f.path.name, fmt_duration(lv.duration), f"{lv.rms_db:.1f} dB", f"{lv.true_peak_db:.1f} dBFS",
                     f"{lv.noise_floor_db:.1f} dB", f"{lv.lufs:.1f} LUFS", verdict, f.holds)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(f.acx.text())
                self.results.setItem(row, col, item)
        self.results.resizeColumnsToContents()
        self.results.setVisible(True)
        failed = sum(not f.acx.passed for f in result.files)
        seconds = sum(f.duration for f in result.files)
        last = self.last_progress or ExportProgress(0, len(result.files), unit="files")
        self.on_done(ExportProgress(last.total, last.total, "", tuple(str(f.path) for f in result.files), seconds,
                                    last.unit))  # counted as it went: the parts, not the files they make
        check = result.check_name[:1].upper() + result.check_name[1:]  # "ACX check", never "Acx check"
        said = set(result.cover.warnings) if result.cover else set()  # the cover's line says its own warnings
        # every line in the dialog's words: the report's hints name the command line's flags ("--cover-fit")
        self.status.setText(in_app_words(
            f"Wrote {counted(len(result.files), 'file')}, {fmt_duration(seconds)} of audio, and "
            f"{result.manifest.name}. {check}: {len(result.files) - failed} pass, "
            f"{failed} fail." + (f"\n{result.cover.line()}" if result.cover else "")
            + (f"\nProof-listening: {proof['summary']}" if proof else "")
            + "".join(f"\n{w}" for w in result.warnings if w not in said)))
        self.fit_report()

    def fit_report(self) -> None:
        """The report as tall as its lines, up to 8 (then it scrolls): it was two lines for ten."""
        lines = self.status.fontMetrics().lineSpacing()
        width = max(self.report_area.viewport().width(), 300)
        needed = self.status.heightForWidth(width) if self.status.hasHeightForWidth() else self.status.sizeHint().height()
        self.report_area.setMinimumHeight(min(max(needed, 2 * lines), 8 * lines) + 4)

    def on_error(self, err: ErrorInfo) -> None:
        self.progress.setFormat("failed")
        self.status.setText(f"Export failed: {in_app_words(err.message)}")
        self.export_btn.setEnabled(True)

    def open_folder(self) -> None:
        self.open_url(QUrl.fromLocalFile(str(Path(self.folder.text()).resolve())))
