"""Voices from inside the app: the installed ones, the Piper catalogue, what the voice families
offer (Kokoro packs and model), models by name (Coqui's, licence first); download (with
progress, checksum and Cancel), remove, and the voice mixer (a blend heard, then saved as a
named voice) of whichever family can mix the chosen voices.

Why through :mod:`studio.engine.voice.download` and :mod:`studio.stack.voice_fetch`: they are
the downloaders ``studio voices add`` uses -- the same index (``voices.json``), the same size
and digest checks, the same temp-file-then-rename, the same family for a name -- so a voice
fetched from the window is as safe as one fetched from the command line. Everything network or disk runs on
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
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import numpy as np

from PySide6.QtCore import QObject, Signal

from studio.core.errors import Cancelled, StudioError, VoiceError
from studio.desktop.facts import VoiceChoice, list_voice_choices
from studio.desktop.messages import ErrorInfo
from studio.desktop.sinks import AudioSink, AudioUnavailable, SoundDeviceSink
from studio.desktop.tasks import TaskRunner
from studio.engine.family import LicenceNote, Offer

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
    fetchable: bool = False  # the library can download it (the catalogue, a Kokoro offer)

    @property
    def removable(self) -> bool:
        return self.installed and self.source == "user"


@dataclass(frozen=True)
class Library:
    voices: tuple[LibraryVoice, ...]
    catalogue_error: str = ""  # why the catalogue could not be read (offline...); installed voices still listed


@dataclass(frozen=True)
class BlendSample:
    """A blend heard before it is saved: what it was mixed from and the sample as written."""

    recipe: str
    path: str
    seconds: float
    played: str  # "" when it is playing, else why not (no sound output here)


@dataclass(frozen=True)
class DownloadProgress:
    voice_id: str
    done: int
    total: int | None


def base_url() -> str:
    from studio.engine.voice.download import DEFAULT_BASE_URL

    return os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL


def merge(index: Mapping[str, Any], installed: tuple[VoiceChoice, ...],
          offers: tuple[Offer, ...] = ()) -> tuple[LibraryVoice, ...]:
    """Catalogue entries, other families' offers and installed voices as one list (installed
    first, then by language)."""
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
            mine.source if mine else "", str(lang.get("name_english") or ""), True)
    for o in offers:
        if o.name not in have:
            rows[o.name] = LibraryVoice(o.name, o.language, o.kind, 0, o.installed, "user" if o.installed else "",
                                        fetchable=not o.installed)
    for v in installed:
        if v.id not in rows:
            m = _NAME.match(v.id)
            rows[v.id] = LibraryVoice(v.id, v.languages or v.language, m.group("quality") if m else "", 0, True,
                                      v.source)
    return tuple(sorted(rows.values(), key=lambda r: (not r.installed, r.language, r.id)))


class VoiceLibrary(QObject):
    """Reads the catalogue, downloads and removes voices in the background."""

    libraryReady = Signal(object)  # Library
    progress = Signal(object)  # DownloadProgress
    installed = Signal(object)  # VoiceChoice of the new voice
    removed = Signal(str)  # voice id
    failed = Signal(object)  # ErrorInfo: reading, downloading, removing or cloning a voice (the library's tab)
    mixFailed = Signal(object)  # ErrorInfo: hearing or saving a blend (the Mix voices tab's, and only there)
    cancelled = Signal(str)  # voice id
    fetched = Signal(str)  # any finished download's name, a model's included
    licenceReady = Signal(object)  # LicenceNote, to show (and agree to) before a download
    blendHeard = Signal(object)  # BlendSample

    def __init__(self, parent: QObject | None = None, *, url: str | None = None, timeout: float = 30.0,
                 catalogue: Mapping[str, Any] | None = None, fetch_url: str | None = None,
                 sink_factory: Callable[[], AudioSink] = SoundDeviceSink) -> None:
        super().__init__(parent)
        self.url = url or base_url()
        self.timeout = timeout
        # a family's model list and repository instead of its own (a mirror; None: the real ones)
        self.catalogue, self.fetch_url = catalogue, fetch_url
        self.sink_factory = sink_factory
        self._sink: AudioSink | None = None
        self.tasks = TaskRunner(self, threads=1, on_error=self.failed.emit)
        self.index: Mapping[str, Any] | None = None
        self.downloading: str | None = None
        self._cancel = threading.Event()

    def load(self) -> None:
        """Installed voices at once, the catalogue when it arrives (a failure is said, not raised)."""
        def work() -> Library:
            from studio.engine.voice.download import fetch_voice_index
            from studio.stack.voice_fetch import offers

            installed, more = list_voice_choices(), offers()
            try:
                self.index = fetch_voice_index(self.url, self.timeout)
            except StudioError as err:
                return Library(merge({}, installed, more), str(err))
            return Library(merge(self.index, installed, more))

        self.tasks.run(work, on_done=self.libraryReady.emit, action="read the voice catalogue")

    def ask_licence(self, name: str) -> None:
        """The licence to show before ``name`` is fetched arrives as ``licenceReady`` (the model
        list is read off the GUI thread); an unknown model arrives as ``failed``."""
        def work() -> LicenceNote:
            from studio.stack.voice_fetch import licence

            return licence(name, self.catalogue)

        self.tasks.run(work, on_done=self.licenceReady.emit, action=f"read the licence of {name}")

    def download(self, voice_id: str, agree: bool = False) -> None:
        """Fetch a catalogue voice (checked against the index) or a Kokoro pack, model or Coqui model
        by name (``agree``: the producer accepted its licence), with progress; Cancel stops it, and
        a cut one resumes on the next try."""
        if self.downloading is not None:
            self.failed.emit(ErrorInfo(f"{self.downloading} is still downloading", "One download at a time"))
            return
        self.downloading, index = voice_id, self.index
        self._cancel.clear()

        def step(done: int, total: int | None) -> None:
            if self._cancel.is_set():
                raise Cancelled(f"the download of {voice_id} was cancelled")
            self.progress.emit(DownloadProgress(voice_id, done, total))

        def work() -> VoiceChoice | None:
            from studio.engine.voice.download import download_piper_voice
            from studio.stack.voice_fetch import fetch

            if index is not None and voice_id in index:
                got: str | None = download_piper_voice(voice_id, base_url=self.url, timeout=self.timeout, index=index,
                                                       progress=step).id
            else:
                voice = fetch(voice_id, agree=agree, timeout=self.timeout, progress=step, catalogue=self.catalogue,
                              base_url=self.fetch_url).voice
                got = voice.id if voice is not None else None
            return next((v for v in list_voice_choices() if v.id == got), None)

        def failed(err: ErrorInfo) -> None:
            self.downloading = None
            if self._cancel.is_set():
                self.cancelled.emit(voice_id)
            else:
                self.failed.emit(err)

        def done(choice: VoiceChoice | None) -> None:
            self.downloading = None
            self.fetched.emit(voice_id)
            if choice is not None:
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

    def listen(self, recipe: str) -> None:
        """Mix ``recipe`` (``kokoro:af_heart=0.6,kokoro:bf_emma=0.4``) and play it speaking a sentence,
        before anything is saved; the sample's WAV stays in the cache (``blendHeard``)."""
        def work() -> tuple[np.ndarray, int, BlendSample]:
            from studio.audio.writers import write_wav
            from studio.core.paths import cache_dir
            from studio.engine.voice.mixing import mixer_for

            mixer = mixer_for(recipe)
            audio, rate = mixer.sample(mixer.mix(recipe), mixer.sample_text)
            path = cache_dir() / "blend-sample.wav"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_wav(path, audio, rate)
            return audio, rate, BlendSample(recipe, str(path), audio.size / rate, "")

        def done(result: tuple[np.ndarray, int, BlendSample]) -> None:
            audio, rate, heard = result
            self.blendHeard.emit(replace(heard, played=self._play(audio, rate)))

        self.tasks.run(work, on_done=done, on_error=self.mixFailed.emit, action=f"mix {recipe}")

    def save_blend(self, name: str, recipe: str) -> None:
        """Store the blend as the voice ``kokoro:NAME``; it arrives as ``installed`` and is listed."""
        def work() -> VoiceChoice:
            from studio.engine.voice.mixing import mixer_for

            mixer = mixer_for(recipe)
            info = mixer.save(name, mixer.mix(recipe))
            return next(v for v in list_voice_choices() if v.id == info.id)

        def done(choice: VoiceChoice) -> None:
            self.installed.emit(choice)
            self.load()

        self.tasks.run(work, on_done=done, on_error=self.mixFailed.emit, action=f"save the blend {name}")

    def _play(self, audio: np.ndarray, rate: int) -> str:
        """Start ``audio`` on a fresh sink (the last sample stops); why not, when it cannot play."""
        self.stop_sound()
        rest = [np.asarray(audio, dtype=np.float32)]

        def pull(frames: int) -> np.ndarray:
            chunk, rest[0] = rest[0][:frames], rest[0][frames:]
            return np.pad(chunk, (0, frames - chunk.size))

        try:
            self._sink = self.sink_factory()
            self._sink.start(rate, pull)
        except AudioUnavailable as err:
            self._sink = None
            return str(err)
        return ""

    def stop_sound(self) -> None:
        """Close the mixer's sample output (a new Listen, the window closed)."""
        if self._sink is not None:
            self._sink.close()
            self._sink = None

    def shutdown(self) -> None:
        self._cancel.set()
        self.tasks.wait()
        self.stop_sound()
