"""The Export dialog's wiring to the session: kept apart to keep the main window readable.

Why here: the dialog asks (a folder, a format, chapters, a package), the session's
:class:`~studio.desktop.exporting.BookExports` answers with the command line's own export;
this module remembers each project's own folder, fills the credits and the proof state
in, and says errors in the dialog's words.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QSettings

from studio.desktop.export_words import in_app_words
from studio.desktop.messages import ErrorInfo, PackageChoices
from studio.desktop.session import ProjectSession
from studio.ui.export_dialog import ExportDialog


class ExportHost(Protocol):
    """What the export wiring uses of the main window (:class:`~studio.ui.main_window.MainWindow`,
    the dialog's parent): typed by what is used, so the window's module is not imported back."""

    session: ProjectSession
    qsettings: QSettings
    book: Any  # BookView: its model

    def show_error(self, err: ErrorInfo) -> None: ...


def export_folder_key(project_folder: str) -> str:
    """The settings key of one project's export folder (a hash: a path's slashes would make groups)."""
    return f"export/folders/{hashlib.sha1(str(Path(project_folder).resolve()).encode()).hexdigest()[:16]}"


def open_export_dialog(window: ExportHost) -> ExportDialog | None:
    """The Export dialog: this project's own folder, the credits to read and edit, the proof state;
    a publish-ready export runs the command line's export (:meth:`BookExports.publish`)."""
    s = window.session
    if s.snapshot is None:
        return None
    folder_key = export_folder_key(s.snapshot.folder)
    default = window.qsettings.value(folder_key) or str(Path(s.snapshot.folder).parent / f"{s.snapshot.title} - audio")
    dlg = ExportDialog(s.snapshot, window.book.model, str(default), window)
    dlg.set_format(str(window.qsettings.value("export/format", "m4b")))
    for fmt in ("wav", "mp3"):  # unset: the dialog's default (MP3 publish-ready, WAV as rendered)
        if window.qsettings.value(f"export/publish/{fmt}") is not None:
            dlg.set_publish(str(window.qsettings.value(f"export/publish/{fmt}")).lower() == "true", fmt)
    dlg.producer.setText(s.settings.producer if s.settings is not None else "")  # the project's (Book Details)
    dlg.require_proof.setChecked(str(window.qsettings.value("export/requireProof", "false")).lower() == "true")

    def remember(folder: str, fmt: str) -> None:
        window.qsettings.setValue(folder_key, folder)  # each project its own folder
        window.qsettings.setValue("export/format", fmt)
        if fmt in ("wav", "mp3"):  # the other formats are always publish-ready
            window.qsettings.setValue(f"export/publish/{fmt}", "true" if dlg.publishing() else "false")

    def failed(err: ErrorInfo) -> None:
        err = replace(err, message=in_app_words(err.message))
        dlg.on_error(err)
        window.show_error(err)

    def run(folder: str, fmt: str, chapters: list[int]) -> None:
        remember(folder, fmt)
        s.exports.export(folder, fmt, chapters, on_progress=dlg.on_progress, on_done=dlg.on_done, on_error=failed)

    def run_publish(folder: str, fmt: str, chapters: list[int], choices: PackageChoices) -> None:
        remember(folder, fmt)
        if s.settings is not None and choices.producer.strip() != s.settings.producer:  # kept with the project
            s.update_settings(s.settings.with_changes(producer=choices.producer.strip()))
        window.qsettings.setValue("export/requireProof", "true" if choices.require_proof else "false")
        s.exports.publish(folder, fmt, chapters, choices=choices, on_progress=dlg.on_progress,
                          on_done=lambda done: dlg.on_published(done.result, done.proof), on_error=failed)

    dlg.exportRequested.connect(run)
    dlg.publishRequested.connect(run_publish)
    dlg.creditsWanted.connect(lambda choices: dlg.isVisible() and s.project is not None and s.exports.credits(
        str(dlg.format.currentData()), dlg.checked_chapters(), choices,
        on_done=lambda c: dlg.isVisible() and dlg.show_credits(c)))  # a typing pause may end after a close
    def say_proof() -> None:  # for the chapters ticked now
        s.exports.proof_before(dlg.checked_chapters(), on_done=lambda p: dlg.isVisible() and dlg.show_proof_before(p))

    dlg.chapters.itemChanged.connect(lambda _item: say_proof())
    dlg.open()
    dlg.request_credits()
    say_proof()
    return dlg
