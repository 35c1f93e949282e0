"""Content-addressed audio cache: one verified WAV per (text, language, voice, settings).

Why content addressing: the key is a hash of everything that shapes a sentence's
audio, so a re-render after an edit, a language override or a settings change
synthesizes exactly the sentences whose inputs changed, and undoing a change finds
the old audio again. Audio is stored as mono 16-bit PCM WAV at the voice's native
rate: half the disk of float32, playable by any tool when debugging, and no loss
that matters -- the delivered files are 16-bit (or MP3) anyway, so this is the same
single quantisation step at -96 dBFS that export would apply.

Every file is written to a temp name, fsynced and renamed into place, and its
sha256 is stored in the project database; a file whose bytes no longer match is
treated as missing and rendered again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.audio.pcm import atomic_write_bytes, read_wav_bytes, wav_bytes

log = logging.getLogger(__name__)

#: Bump when the stored audio format, or what a key means, changes: every old
#: entry then misses and is rendered again instead of being misread.
CACHE_FORMAT_VERSION = 1


@dataclass(frozen=True)
class VoiceIdentity:
    """A voice as it enters cache keys: its id and the sha256 of its model file."""

    voice_id: str
    fingerprint: str


@dataclass(frozen=True)
class CacheEntry:
    """What the database knows about one cached file."""

    key: str
    checksum: str
    size: int
    sample_rate: int
    duration: float


def upsert_entry(conn: sqlite3.Connection, entry: CacheEntry) -> None:
    """Record (or replace) what the database knows of one cached file, in the caller's transaction."""
    conn.execute(
        "INSERT INTO cache_entries (key, checksum, size, sample_rate, duration) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT(key) DO UPDATE SET checksum = excluded.checksum, size = excluded.size,"
        " sample_rate = excluded.sample_rate, duration = excluded.duration",
        (entry.key, entry.checksum, entry.size, entry.sample_rate, entry.duration),
    )


def cache_key(
    *,
    text: str,
    language: str,
    voice: VoiceIdentity,
    engine: str,
    settings_token: str,
    lexicon: str = "",
    cast: str = "",
) -> str:
    """sha256 over every input that shapes the audio (see module docstring).

    ``engine`` names backend and preset (``"onnx/"``, ``"torch/fast"``): the same
    voice through another backend or preset may sound different. ``lexicon`` is the
    digest of the pronunciation entries that occur in this sentence
    (:meth:`studio.core.lexicon.Lexicon.digest`), so editing an entry re-renders
    exactly the sentences containing it; it enters the key only when non-empty,
    so sentences no entry touches keep the keys (and audio) they had before.
    ``cast`` is :func:`studio.project.cast.cast_key_part` (the voices, speakers and
    performances of a sentence's quoted parts), in the key only when non-empty too.
    """
    payload = json.dumps(
        {
            "format": CACHE_FORMAT_VERSION,
            "text": text,
            "language": language,
            "voice": voice.voice_id,
            "voice_sha256": voice.fingerprint,
            "engine": engine,
            "settings": settings_token,
            **({"lexicon": lexicon} if lexicon else {}),
            **({"cast": cast} if cast else {}),
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class AudioCache:
    """The ``cache/`` folder of a project: ``cache/<key[:2]>/<key>.wav``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path_for(self, key: str) -> Path:
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.root / key[:2] / f"{key}.wav"

    def store(self, key: str, audio: np.ndarray, sample_rate: int) -> CacheEntry:
        """Write audio atomically and return the entry to record in the database."""
        data = wav_bytes(audio, sample_rate)
        path = self.path_for(key)
        atomic_write_bytes(path, data)
        frames = int(np.asarray(audio).size)
        return CacheEntry(
            key=key,
            checksum=hashlib.sha256(data).hexdigest(),
            size=len(data),
            sample_rate=int(sample_rate),
            duration=frames / float(sample_rate),
        )

    def looks_present(self, entry: CacheEntry) -> bool:
        """Cheap check (exists, right size) used when deciding what to render."""
        try:
            return os.stat(self.path_for(entry.key)).st_size == entry.size
        except OSError:
            return False

    def load(self, entry: CacheEntry) -> np.ndarray | None:
        """The entry's float32 audio, or None if the file is missing or corrupt."""
        path = self.path_for(entry.key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            log.warning("cached audio %s is missing; it will be rendered again", path.name)
            return None
        except OSError as err:
            log.warning("cannot read cached audio %s (%s); it will be rendered again", path, err)
            return None
        if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.checksum:
            log.warning("cached audio %s is corrupt (checksum mismatch); it will be rendered again", path.name)
            return None
        try:
            audio, rate = read_wav_bytes(data)
        except ValueError as err:  # checksum matched but unreadable: format drift
            log.warning("cached audio %s unreadable (%s); it will be rendered again", path.name, err)
            return None
        if rate != entry.sample_rate:
            log.warning("cached audio %s has rate %d, expected %d", path.name, rate, entry.sample_rate)
            return None
        return audio

    def store_parts(self, key: str, frames: int, parts: list[dict]) -> None:
        """Beside a cast sentence's audio of ``frames`` samples: where each part lies and in which
        language it was said (``start``/``end`` samples, ``language``, ``printed``, ``spoken``), so
        proof-listening hears a character voiced in another language in that language."""
        data = json.dumps({"frames": int(frames), "parts": parts}, ensure_ascii=False)
        atomic_write_bytes(self._parts_path(key), data.encode("utf-8"))

    def parts_of(self, key: str, frames: int) -> list[dict] | None:
        """The parts :meth:`store_parts` wrote for ``key``, if they describe audio of ``frames``
        samples (a kept take chosen since is another length: None, and it is heard whole)."""
        try:
            data = json.loads(self._parts_path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data["parts"] if isinstance(data, dict) and data.get("frames") == frames and data.get("parts") \
            else None

    def _parts_path(self, key: str) -> Path:
        return self.path_for(key).with_suffix(".parts.json")

    def discard(self, key: str) -> None:
        """Remove a (corrupt) file so it cannot be mistaken for good audio later."""
        try:
            self._parts_path(key).unlink(missing_ok=True)
            self.path_for(key).unlink(missing_ok=True)
        except OSError as err:
            log.warning("could not remove cached audio for %s: %s", key, err)
