"""The Voices window's library tab: installed voices, the Piper catalogue and Kokoro's
packs and model, with language, quality and size; a Coqui model by name; Download
(the licence first, agreed to when it is non-commercial; progress, checksum, Cancel),
Remove, Sample.

Why a tab of Voices & presets: a downloaded voice is chosen right there (default
voice, a voice per language), without closing and reopening anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QMessageBox, QProgressBar, QPushButton,
    QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from studio.desktop.messages import ErrorInfo
from studio.desktop.voice_library import DownloadProgress, Library, LibraryVoice, VoiceLibrary

if TYPE_CHECKING:
    from studio.desktop.voice_library import LicenceNote
    from studio.ui.clone_dialog import CloneDialog

COLUMNS = ("Voice", "Language", "Quality", "Size", "Status")


def fmt_size(n: int) -> str:
    return "" if n <= 0 else f"{n / 2**20:.1f} MB"


class VoiceLibraryPanel(QWidget):
    sampleRequested = Signal(str)  # voice id (installed)

    def __init__(self, library: VoiceLibrary, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.rows: tuple[LibraryVoice, ...] = ()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: language (fr, de_DE), name or quality")
        self.filter.textChanged.connect(lambda *_: self._fill())
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._buttons)
        self.download_btn = QPushButton("Download")
        self.download_btn.setToolTip("Fetch the voice, checked against the catalogue's size and checksum")
        self.download_btn.clicked.connect(lambda: self._with(lambda v: self.start_download(v.id)))
        self.by_name = QLineEdit()
        self.by_name.setPlaceholderText("A Coqui model by name, e.g. tts_models/en/ljspeech/tacotron2-DDC")
        self.by_name_btn = QPushButton("Download by name")
        self.by_name_btn.setToolTip("Its licence is shown first; a non-commercial one asks for your agreement")
        self.by_name_btn.clicked.connect(lambda: self.by_name.text().strip() and self.start_download(
            self.by_name.text().strip()))
        self.cancel_btn = QPushButton("Cancel download")
        self.cancel_btn.clicked.connect(self.library.cancel)
        self.remove_btn = QPushButton("Remove")
        self.remove_btn.setToolTip("Delete a downloaded voice (the bundled voice stays)")
        self.remove_btn.clicked.connect(lambda: self._with(lambda v: self.library.remove(v.id)))
        self.sample_btn = QPushButton("\u25b6 Sample")
        self.sample_btn.setToolTip("Hear a sentence in this voice (installed voices)")
        self.sample_btn.clicked.connect(lambda: self._with(lambda v: self.sampleRequested.emit(v.id)))
        self.clone_btn = QPushButton("New voice from a recording\u2026")
        self.clone_btn.setToolTip("Take a voice from a recording of one person speaking (an XTTS v2 model)")
        self.clone_btn.clicked.connect(self.new_voice_from_recording)
        self.bar = QProgressBar()
        self.bar.setVisible(False)
        self.status = QLabel("Reading the voice catalogue\u2026")
        self.status.setWordWrap(True)
        buttons = QHBoxLayout()
        for b in (self.download_btn, self.cancel_btn, self.remove_btn, self.sample_btn, self.clone_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        named = QHBoxLayout()
        named.addWidget(self.by_name, 1)
        named.addWidget(self.by_name_btn)
        layout.addLayout(named)
        layout.addWidget(self.bar)
        layout.addWidget(self.status)
        library.libraryReady.connect(self.show_library)
        library.progress.connect(self._progress)
        library.installed.connect(lambda c: self._said(f"{c.id} is installed: choose it on the Voices tab"))
        library.removed.connect(lambda vid: self._said(f"{vid} was removed"))
        library.cancelled.connect(lambda vid: self._said(f"Download of {vid} cancelled; nothing half-made is listed "
                                                                  "(Download again resumes a Kokoro or Coqui file)"))
        library.failed.connect(lambda err: self._said(f"\u26a0 {err.message}", err))
        library.fetched.connect(lambda name: self._said(f"{name} is downloaded and checked"))
        library.licenceReady.connect(self._licence)
        self.licence_box: QMessageBox | None = None  # the agreement asked for a non-commercial licence
        self._buttons()

    def start_download(self, name: str) -> None:
        """The licence first (:meth:`_licence`), then the download."""
        self._said(f"Reading the licence of {name}\u2026")
        self.library.ask_licence(name)

    def _licence(self, note: LicenceNote) -> None:
        """Say the licence; a non-commercial one must be agreed to before a byte is fetched."""
        if note.agreement:
            self.licence_box = QMessageBox(QMessageBox.Icon.Warning, "Licence", f"{note.line}.\n\nDownload "
                                           "it and accept this licence?", QMessageBox.StandardButton.Yes
                                           | QMessageBox.StandardButton.No, self)
            agreed = self.licence_box.exec() == QMessageBox.StandardButton.Yes
            self.licence_box = None
            if not agreed:
                self._said(f"{note.name} was not downloaded: its licence was not accepted")
                return
        self.library.download(note.name, agree=note.agreement)
        self._said(f"Downloading {note.name}" + (f" \u2014 {note.line}" if note.line else "") + "\u2026")

    def show_library(self, library: Library) -> None:
        self.rows = library.voices
        catalogue = sum(1 for v in self.rows if v.size_bytes)
        installed = sum(1 for v in self.rows if v.installed)
        self.status.setText(f"{installed} installed, {catalogue} in the catalogue"
                            + (f" \u2014 catalogue not available: {library.catalogue_error}" if library.catalogue_error else ""))
        self._fill()

    def new_voice_from_recording(self, dialog: "CloneDialog | None" = None) -> None:
        """Ask for the recording, name, model and consent; the library makes the voice in the background."""
        from studio.stack.cloning import cloning_models, cloning_offer
        from studio.ui.clone_dialog import CloneDialog

        offer = cloning_offer()
        dialog = dialog or CloneDialog(cloning_models(), self, offer)
        dialog.addModelRequested.connect(lambda: self.start_download(offer))  # its licence first
        if dialog.exec() != CloneDialog.DialogCode.Accepted:
            return
        model, name, recording, consent = dialog.values()
        self._said(f"Making the voice {name} from {recording}\u2026")
        self.library.clone(model, name, recording, consent)

    def selected(self) -> LibraryVoice | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        vid = self.table.item(rows[0].row(), 0).data(Qt.ItemDataRole.UserRole)
        return next((v for v in self.rows if v.id == vid), None)

    def select(self, voice_id: str) -> None:
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(Qt.ItemDataRole.UserRole) == voice_id:
                self.table.selectRow(r)

    def _fill(self) -> None:
        keep = self.selected()
        needle = self.filter.text().strip().lower()
        shown = [v for v in self.rows if not needle or needle in f"{v.id} {v.language} {v.language_name} {v.quality}".lower()]
        self.table.setRowCount(len(shown))
        for r, v in enumerate(shown):
            status = ("bundled" if v.source == "bundled" else "installed") if v.installed else ""
            values = (v.id, f"{v.language} {v.language_name}".strip(), v.quality, fmt_size(v.size_bytes), status)
            for c, text in enumerate(values):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, v.id)
                self.table.setItem(r, c, item)
        if keep is not None:
            self.select(keep.id)
        self._buttons()

    def _with(self, fn) -> None:  # noqa: ANN001
        voice = self.selected()
        if voice is not None:
            fn(voice)
            self._buttons()

    def _buttons(self) -> None:
        v, busy = self.selected(), self.library.downloading is not None
        self.download_btn.setEnabled(v is not None and not v.installed and v.fetchable and not busy)
        self.by_name_btn.setEnabled(not busy)
        self.cancel_btn.setEnabled(busy)
        self.remove_btn.setEnabled(v is not None and v.removable and not busy)
        self.sample_btn.setEnabled(v is not None and v.installed)

    def _progress(self, p: DownloadProgress) -> None:
        self.bar.setVisible(True)
        self.bar.setRange(0, p.total or 0)
        if p.total:
            self.bar.setValue(p.done)
        self.bar.setFormat(f"{p.voice_id}: {p.done / 2**20:.1f} of {fmt_size(p.total or 0) or '?'}")
        self._buttons()

    def _said(self, text: str, err: ErrorInfo | None = None) -> None:
        if self.library.downloading is None:
            self.bar.setVisible(False)
        self.status.setText(text)
        self._buttons()
