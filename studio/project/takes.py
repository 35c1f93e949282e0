"""Takes: every synthesis of a sentence kept, one of them chosen.

Why this shape: the audio cache is content-addressed (one file per set of
inputs), so a new take of the same sentence lands on the same key and used to
overwrite the old one. Takes keep each synthesis as its own file under
``takes/`` (a hard link of the cache file where the file system allows it, so
keeping a take costs no space until a newer take replaces the cache file), and
the cache file of a key always holds the *chosen* take. Export, playback and
resume read the cache exactly as before and so use the chosen take without
knowing takes exist.

Takes are matched to a sentence by what it says (text and language), not by its
id or key: sentences saying the same thing share audio, and takes made with
another preset or voice of the same words stay listed for comparison.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol

import numpy as np

from studio.audio.pcm import atomic_write_bytes, read_wav_bytes
from studio.core.errors import ProjectError
from studio.project.cache import AudioCache, CacheEntry, upsert_entry
from studio.project.db import ProjectDb
from studio.project.records import SentenceRow
from studio.project.settings import ProjectSettings



class TakesSource(Protocol):
    """What the takes ask of their project (:class:`~studio.project.store.Project`, which owns
    them as ``project.takes``: typed by what is used, so the store's module is not imported back)."""

    folder: Path
    cache: AudioCache

    def settings(self) -> ProjectSettings: ...
    def voice_for(self, language: str, settings: ProjectSettings | None = None) -> str: ...
    def sentences(self, chapters: Iterable[int] | None = None) -> list[SentenceRow]: ...
    def cache_entry(self, key: str) -> CacheEntry | None: ...

log = logging.getLogger(__name__)

#: takes kept per sentence (the oldest unchosen ones go first)
MAX_TAKES = 5
TAKES_DIR = "takes"

@dataclass(frozen=True)
class Take:
    """One kept synthesis. ``chosen``: it is what the sentence's cache file holds now."""

    id: int
    key: str
    voice_id: str
    engine: str
    duration: float
    size: int
    created_at: str
    chosen: bool

    @property
    def preset(self) -> str:
        """The preset part of ``backend/preset`` (the backend when the preset is the default)."""
        backend, _, preset = self.engine.partition("/")
        return preset or backend


def take_path(folder: Path, take_id: int) -> Path:
    return folder / TAKES_DIR / f"{take_id // 1000:03d}" / f"{take_id}.wav"


def _keep_file(source: Path, target: Path) -> None:
    """A hard link when possible (no extra space), else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def record_take(conn: sqlite3.Connection, folder: Path, cache: AudioCache, entry: CacheEntry, *,
                text: str, language: str, voice_id: str, engine: str, seed: int = 0) -> int | None:
    """Keep the cache file of ``entry`` as a take (inside the caller's transaction); its id.

    ``seed`` is the take's draw of the sampling noise
    (:attr:`~studio.engine.base.SynthesisSettings.take`): kept so the next new take
    of the key draws another one (:meth:`ProjectTakes.next_take`).

    Idempotent: a take with the same key and checksum is not kept twice. Older
    takes over :data:`MAX_TAKES` for the same words are removed.
    """
    same = conn.execute("SELECT id FROM takes WHERE key = ? AND checksum = ?", (entry.key, entry.checksum)).fetchone()
    if same is not None:
        return int(same[0])
    source = cache.path_for(entry.key)
    if not source.is_file():
        return None
    cur = conn.execute(
        "INSERT INTO takes (key, text, language, voice_id, engine, checksum, size, sample_rate, duration, seed)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (entry.key, text, language, voice_id, engine, entry.checksum, entry.size, entry.sample_rate, entry.duration,
         seed),
    )
    take_id = int(cur.lastrowid or 0)
    try:
        _keep_file(source, take_path(folder, take_id))
    except OSError as err:  # a take is a convenience: the render itself must not fail for it
        log.warning("could not keep take %d of %s: %s", take_id, entry.key[:12], err)
        conn.execute("DELETE FROM takes WHERE id = ?", (take_id,))
        return None
    _prune(conn, folder, text, language, keep=take_id)
    return take_id


def _prune(conn: sqlite3.Connection, folder: Path, text: str, language: str, keep: int) -> None:
    rows = conn.execute("SELECT id FROM takes WHERE text = ? AND language = ? ORDER BY id DESC",
                        (text, language)).fetchall()
    for (take_id,) in rows[MAX_TAKES:]:
        if take_id == keep:
            continue
        conn.execute("DELETE FROM takes WHERE id = ?", (take_id,))
        take_path(folder, take_id).unlink(missing_ok=True)


def list_takes(conn: sqlite3.Connection, text: str, language: str, current_checksum: str | None) -> list[Take]:
    """Takes of these words, oldest first; the one matching ``current_checksum`` is chosen."""
    rows = conn.execute(
        "SELECT id, key, voice_id, engine, duration, size, created_at, checksum FROM takes"
        " WHERE text = ? AND language = ? ORDER BY id", (text, language)).fetchall()
    chosen_seen = False
    out = []
    for r in reversed(rows):  # the newest of equal checksums is the chosen one
        chosen = not chosen_seen and current_checksum is not None and r[7] == current_checksum
        chosen_seen = chosen_seen or chosen
        out.append(Take(r[0], r[1], r[2], r[3], float(r[4]), int(r[5]), str(r[6]), chosen))
    return list(reversed(out))


def take_entry(conn: sqlite3.Connection, take_id: int) -> CacheEntry | None:
    """The take's audio file described like a cache entry (to load and verify it)."""
    row = conn.execute("SELECT key, checksum, size, sample_rate, duration FROM takes WHERE id = ?",
                       (take_id,)).fetchone()
    return CacheEntry(*row) if row else None


def takes_size(conn: sqlite3.Connection) -> int:
    """Bytes the takes' files would use if none shared space with the cache (an upper bound)."""
    return int(conn.execute("SELECT COALESCE(SUM(size), 0) FROM takes").fetchone()[0])


def load_take(folder: Path, entry: CacheEntry, take_id: int) -> bytes | None:
    """The take file's bytes, verified against its checksum (None if missing or changed)."""
    try:
        data = take_path(folder, take_id).read_bytes()
    except OSError as err:
        log.warning("take %d cannot be read (%s)", take_id, err)
        return None
    if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.checksum:
        log.warning("take %d is damaged (checksum mismatch)", take_id)
        return None
    return data


class ProjectTakes:
    """The takes of one open project (``project.takes``): list, keep, choose, load.

    Kept out of :class:`~studio.project.store.Project` so the store stays about
    sentences and states; it reads and writes through the project's database handle
    (``project.db``) and asks the project only for sentences, settings and the cache.
    """

    def __init__(self, db: ProjectDb, project: TakesSource) -> None:
        self.db = db
        self.project = project

    def inputs(self, sentence_id: int) -> dict[str, str] | None:
        """What a new take of this sentence is recorded with (its words, voice and engine)."""
        row = self.db.read().execute(
            "SELECT s.text, COALESCE(p.language_override, s.language) FROM sentences s"
            " LEFT JOIN paragraphs p ON p.id = s.paragraph_id WHERE s.id = ?", (sentence_id,)).fetchone()
        if row is None:
            return None
        settings = self.project.settings()
        return {"text": row[0], "language": row[1], "voice_id": self.project.voice_for(row[1], settings),
                "engine": settings.engine_token}

    def next_take(self, key: str) -> int:
        """The noise draw of the next synthesis of ``key``: 0 the first time, then one
        past every take kept for it.

        Why from the takes: a sentence's first render (and a resumed one) must sound
        exactly like a clean render, while "New take" (the key's audio forgotten, the
        key rendered again) must sound different; what tells them apart is whether the
        key was synthesized before. A cache file lost from disk is rendered as a new take.
        """
        row = self.db.read().execute("SELECT MAX(seed) FROM takes WHERE key = ?", (key,)).fetchone()
        return 0 if row is None or row[0] is None else int(row[0]) + 1

    def _words(self, sentence_id: int) -> tuple[str, str, str | None, str]:
        """``(text, effective language, cache key, expected key)`` of a sentence."""
        row = next((r for r in self.project.sentences() if r.id == sentence_id), None)
        if row is None:
            raise ProjectError(f"there is no sentence with id {sentence_id}")
        return row.text, row.language, row.cache_key if row.state == "done" else None, row.expected_key

    def for_sentence(self, sentence_id: int) -> list[Take]:
        text, language, key, _expected = self._words(sentence_id)
        entry = self.project.cache_entry(key) if key else None
        return list_takes(self.db.read(), text, language, entry.checksum if entry else None)

    def keep_current(self, key: str) -> int | None:
        """Make a key's current audio a take if it is not one yet (projects from before takes)."""
        entry = self.project.cache_entry(key)
        if entry is None:
            return None
        row = next((r for r in self.project.sentences() if r.cache_key == key), None)
        if row is None:
            return None
        settings = self.project.settings()
        with self.db.write() as conn:
            return record_take(conn, self.project.folder, self.project.cache, entry, text=row.text,
                               language=row.language, voice_id=self.project.voice_for(row.language, settings),
                               engine=settings.engine_token)

    def choose(self, sentence_id: int, take_id: int) -> CacheEntry:
        """Put a take's audio in the sentence's cache file (export and playback then use it)."""
        conn = self.db.read()
        entry = take_entry(conn, take_id)
        text, language, _key, expected = self._words(sentence_id)
        if entry is None or not any(t.id == take_id for t in list_takes(conn, text, language, None)):
            raise ProjectError(f"take {take_id} is not a take of sentence {sentence_id}")
        data = load_take(self.project.folder, entry, take_id)
        if data is None:
            raise ProjectError(f"take {take_id} is missing or damaged; make a new take instead")
        atomic_write_bytes(self.project.cache.path_for(expected), data)
        chosen = CacheEntry(expected, entry.checksum, entry.size, entry.sample_rate, entry.duration)
        with self.db.write() as conn:
            upsert_entry(conn, chosen)
            conn.execute(
                "UPDATE sentences SET state = 'done', reason = NULL, cache_key = ?, duration = ?, checksum = ?,"
                " updated_at = datetime('now') WHERE id = ? OR cache_key = ?",
                (chosen.key, chosen.duration, chosen.checksum, sentence_id, chosen.key))
        log.info("sentence %d now uses take %d", sentence_id, take_id)
        return chosen

    def audio(self, take_id: int) -> tuple[np.ndarray, int] | None:
        """A take's samples and rate, verified (None if missing or damaged)."""
        entry = take_entry(self.db.read(), take_id)
        data = load_take(self.project.folder, entry, take_id) if entry else None
        if data is None or entry is None:
            return None
        audio, rate = read_wav_bytes(data)
        return audio, rate

    def size(self) -> int:
        return takes_size(self.db.read())
