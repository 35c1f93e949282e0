"""Voices from inside the app: the installed ones and the Piper catalogue, download
(with progress, checksum and Cancel) and remove.

Why through :mod:`studio.engine.voice.download`: it is the downloader ``studio
voices add`` uses -- the same index (``voices.json``), the same size and digest
checks, the same temp-file-then-rename -- so a voice fetched from the window is as
safe as one fetched from the command line. Everything network or disk runs on
this object's own task thread; the window gets frozen values.

Cancel: the download's progress callback raises :class:`~studio.core.errors.Cancelled`
between two chunks; the downloader removes its temp files, so nothing half-made
is left and the voice never appears in the list.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass
from typing import Any, Mapping

from PySide6.QtCore import QObject, Signal

from studio.core.errors import Cancelled, StudioError, VoiceError
from studio.desktop.facts import VoiceChoice, list_voice_choices
from studio.desktop.messages import ErrorInfo
from studio.desktop.tasks import TaskRunner

log = logging.getLogger(__name__)

#: where the catalogue comes from (the piper-voices index), overridable for mirrors and tests
BASE_URL_ENV = "STUDIO_VOICES_BASE_URL"
_NAME = re.compile(r"^(?P<lang>[a-z]{2,3}_[A-Za-z0-9]+)-(?P<speaker>[^-]+)-(?P<quality>[^-]+)$")


@dataclass(frozen=True)
class LibraryVoice:
    """One row of the library: a catalogue voice, an installed one, or both."""

    id: str
    language: str
    quality: str
    size_bytes: int  # what a download costs (0: not in the catalogue)
    installed: bool
    source: str = ""  # bundled, user, ... for an installed voice
    language_name: str = ""

    @property
    def removable(self) -> bool:
        return self.installed and self.source == "user"


@dataclass(frozen=True)
class Library:
    voices: tuple[LibraryVoice, ...]
    catalogue_error: str = ""  # why the catalogue could not be read (offline...); installed voices still listed


@dataclass(frozen=True)
class DownloadProgress:
    voice_id: str
    done: int
    total: int | None


def base_url() -> str:
    from studio.engine.voice.download import DEFAULT_BASE_URL

    return os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL


def merge(index: Mapping[str, Any], installed: tuple[VoiceChoice, ...]) -> tuple[LibraryVoice, ...]:
    """Catalogue entries and installed voices as one list (installed first, then by language)."""
    have = {v.id: v for v in installed}
    rows: dict[str, LibraryVoice] = {}
    for name, entry in index.items():
        if not isinstance(entry, Mapping):
            continue
        m = _NAME.match(name)
        lang = entry.get("language") if isinstance(entry.get("language"), Mapping) else {}
        files = entry.get("files") if isinstance(entry.get("files"), Mapping) else {}
        size = sum(int(f.get("size_bytes") or 0) for f in files.values() if isinstance(f, Mapping))
        mine = have.get(name)
        rows[name] = LibraryVoice(
            name, str(lang.get("code") or (m.group("lang") if m else "")),
            str(entry.get("quality") or (m.group("quality") if m else "")), size, mine is not None,
            mine.source if mine else "", str(lang.get("name_english") or ""))
    for v in installed:
        if v.id not in rows:
            m = _NAME.match(v.id)
            rows[v.id] = LibraryVoice(v.id, v.language, m.group("quality") if m else "", 0, True, v.source)
    return tuple(sorted(rows.values(), key=lambda r: (not r.installed, r.language, r.id)))


class VoiceLibrary(QObject):
    """Reads the catalogue, downloads and removes voices in the background."""

    libraryReady = Signal(object)  # Library
    progress = Signal(object)  # DownloadProgress
    installed = Signal(object)  # VoiceChoice of the new voice
    removed = Signal(str)  # voice id
    failed = Signal(object)  # ErrorInfo
    cancelled = Signal(str)  # voice id

    def __init__(self, parent: QObject | None = None, *, url: str | None = None, timeout: float = 30.0) -> None:
        super().__init__(parent)
        self.url = url or base_url()
        self.timeout = timeout
        self.tasks = TaskRunner(self, threads=1, on_error=self.failed.emit)
        self.index: Mapping[str, Any] | None = None
        self.downloading: str | None = None
        self._cancel = threading.Event()

    def load(self) -> None:
        """Installed voices at once, the catalogue when it arrives (a failure is said, not raised)."""
        def work() -> Library:
            from studio.engine.voice.download import fetch_voice_index

            installed = list_voice_choices()
            try:
                self.index = fetch_voice_index(self.url, self.timeout)
            except StudioError as err:
                return Library(merge({}, installed), str(err))
            return Library(merge(self.index, installed))

        self.tasks.run(work, on_done=self.libraryReady.emit, action="read the voice catalogue")

    def download(self, voice_id: str) -> None:
        """Fetch a catalogue voice (checked against the index), with progress; Cancel stops it."""
        if self.downloading is not None:
            self.failed.emit(ErrorInfo(f"{self.downloading} is still downloading", "One download at a time"))
            return
        self.downloading, index = voice_id, self.index
        self._cancel.clear()

        def step(done: int, total: int | None) -> None:
            if self._cancel.is_set():
                raise Cancelled(f"the download of {voice_id} was cancelled")
            self.progress.emit(DownloadProgress(voice_id, done, total))

        def work() -> VoiceChoice:
            from studio.engine.voice.download import download_piper_voice

            info = download_piper_voice(voice_id, base_url=self.url, timeout=self.timeout, index=index, progress=step)
            return next(v for v in list_voice_choices() if v.id == info.id)

        def failed(err: ErrorInfo) -> None:
            self.downloading = None
            if self._cancel.is_set():
                self.cancelled.emit(voice_id)
            else:
                self.failed.emit(err)

        def done(choice: VoiceChoice) -> None:
            self.downloading = None
            self.installed.emit(choice)
            self.load()

        self.tasks.run(work, on_done=done, on_error=failed, action=f"download {voice_id}")

    def clone(self, model_id: str, name: str, recording: str, consent: str) -> None:
        """Make voice ``name`` from a recording with an XTTS model (:mod:`studio.stack.cloning`): the
        clip checked (a refusal arrives as ``failed`` with its reason), the speaker computed once."""
        def work() -> VoiceChoice:
            from pathlib import Path

            from studio.stack.cloning import voice_from_recording

            folder, _ = voice_from_recording(model_id, name, Path(recording), consent)
            return next(v for v in list_voice_choices() if v.id == folder.name)

        def done(choice: VoiceChoice) -> None:
            self.installed.emit(choice)
            self.load()

        self.tasks.run(work, on_done=done, action=f"make the voice {name} from {recording}")

    def cancel(self) -> None:
        self._cancel.set()

    def remove(self, voice_id: str) -> None:
        """Delete a downloaded voice (the bundled one stays); projects using it say so when they render."""
        def work() -> str:
            from studio.engine.voice.catalog import list_voices

            voice = next((v for v in list_voices() if v.id == voice_id), None)
            if voice is None or voice.source != "user":
                raise VoiceError(f"{voice_id} is not a downloaded voice; only downloaded voices can be removed")
            for path in (voice.config_path, voice.model_path):  # config first: the voice vanishes from lists at once
                path.unlink(missing_ok=True)
            log.info("removed voice %s", voice_id)
            return voice_id

        def done(vid: str) -> None:
            self.removed.emit(vid)
            self.load()

        self.tasks.run(work, on_done=done, action=f"remove {voice_id}")

    def shutdown(self) -> None:
        self._cancel.set()
        self.tasks.wait()
