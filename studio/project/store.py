"""A project: a folder holding ``project.sqlite`` and the ``cache/`` of sentence audio.

Why a database per project and a commit per sentence: rendering a book takes hours,
and a crash, a kill or a closed laptop lid must lose at most the sentence being
synthesized. Every finished sentence is recorded (cache key, checksum, duration)
the moment its audio is safely on disk, so the same command resumes exactly where
it stopped.

Threading: one connection per thread (SQLite connections are not to be shared
while in use) and a lock around write transactions, which is what one render
thread plus GUI readers need; both live in the database handle ``Project.db``
(:mod:`studio.project.db`), which the facets -- chapters, takes, lexicon -- get too.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from pathlib import Path
from typing import ContextManager, Iterable

from studio.core.errors import DiskFull, ProjectError, is_disk_full
from studio.core.language import language_family
from studio.core.lexicon import Lexicon
from studio.core.types import Book
from studio.project import bookdb, restructure
from studio.project.cache import AudioCache, CacheEntry, upsert_entry
from studio.project.cast import ProjectCast
from studio.project.chapters import ProjectChapters
from studio.project.db import ProjectDb, sqlite_full
from studio.project.direction import directions
from studio.project.emphasis import follow_edit
from studio.project.lexicon import ProjectLexicon, user_lexicon
from studio.project.rendition import Rendition, Renditions, SentenceInputs, Version, voice_for
from studio.project.spoken import ProjectSpoken, kept_overrides, restore_overrides
from studio.project.records import ChapterInfo, SentenceRow
from studio.project.schema import STATES, configure, ensure_schema, versions
from studio.project.settings import ProjectSettings, write_settings
from studio.project.takes import ProjectTakes, record_take
from studio.project.unvoiced import voice_language

log = logging.getLogger(__name__)


class Project:
    """Open with :meth:`create` or :meth:`open`; close (or use ``with``) when done."""

    DB_NAME = "project.sqlite"
    CACHE_DIR = "cache"

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.db_path = self.folder / self.DB_NAME
        self.cache = AudioCache(self.folder / self.CACHE_DIR)
        #: the database handle the store and its facets (chapters, takes, lexicon) share
        self.db = ProjectDb(self.db_path)
        self._read_lock = threading.RLock()
        self._rendition_keeper = Renditions()
        #: (rendition counter, user lexicon, version, renditions) of the last read (see renditions())
        self._rendered: tuple[int, Lexicon, Version, dict[int, Rendition]] | None = None
        #: (rows counter, the renditions joined, the rows) of the last read (see sentences())
        self._rows: tuple[int, dict[int, Rendition], list[SentenceRow]] | None = None

    # ------------------------------------------------------------ lifecycle

    @classmethod
    def is_project(cls, folder: str | Path) -> bool:
        return (Path(folder) / cls.DB_NAME).is_file()

    @classmethod
    def create(cls, folder: str | Path, book: Book, settings: ProjectSettings, *, source_hash: str = "") -> "Project":
        """Make a new project folder for ``book``; ProjectError if one is there already.

        The database is built under a temporary name and renamed into place, so a
        crash during creation never leaves a half-made project behind.
        """
        folder = Path(folder)
        if cls.is_project(folder):
            raise ProjectError(f"{folder} already holds a project; open it instead")
        if folder.exists() and not folder.is_dir():
            raise ProjectError(f"{folder} exists and is not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{cls.DB_NAME}.creating"
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            configure(conn)
            ensure_schema(conn, str(folder))
            conn.execute("BEGIN IMMEDIATE")
            bookdb.write_book_row(conn, book, source_hash)
            bookdb.insert_book(conn, book)
            write_settings(conn, settings)
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as err:
            if sqlite_full(err):
                raise DiskFull(folder / cls.DB_NAME) from err
            raise ProjectError(f"cannot create project in {folder}: {err}") from err
        except OSError as err:
            if is_disk_full(err):
                raise DiskFull(folder / cls.DB_NAME) from err
            raise
        finally:
            conn.close()
        tmp.replace(folder / cls.DB_NAME)
        log.info("created project %s (%d chapters)", folder, len(book.chapters))
        return cls.open(folder)

    @classmethod
    def open(cls, folder: str | Path) -> "Project":
        """Open an existing project (migrating an older schema); ProjectError if unusable."""
        folder = Path(folder)
        if not cls.is_project(folder):
            raise ProjectError(f"{folder} is not a studio project (no {cls.DB_NAME} in it)")
        project = cls(folder)
        try:
            if project._conn().execute("SELECT count(*) FROM book").fetchone()[0] != 1:
                raise ProjectError(f"{folder}: project database has no book; delete the folder and start again")
        except BaseException:
            project.close()
            raise
        return project

    def close(self) -> None:
        """Close every thread's connection. Idempotent."""
        self.db.close()

    def __enter__(self) -> "Project":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _conn(self) -> sqlite3.Connection:
        """The store's own shorthand for ``self.db.read()``; facets are handed ``db`` instead."""
        return self.db.read()

    def _write(self) -> ContextManager[sqlite3.Connection]:
        """The store's own shorthand for ``self.db.write()``."""
        return self.db.write()

    # ------------------------------------------------------------ book

    def book(self) -> Book:
        """The book as the project has it now (edits and language overrides applied)."""
        book = bookdb.load_book(self._conn())
        if book is None:  # pragma: no cover - guarded by open()
            raise ProjectError(f"{self.folder}: project has no book")
        return book

    def source(self) -> tuple[str, str]:
        """``(source path, source sha256)`` of the manuscript the project was made from."""
        row = self._conn().execute("SELECT source, source_hash FROM book WHERE id = 1").fetchone()
        return (row[0], row[1]) if row else ("", "")

    def replace_book(self, book: Book, *, source_hash: str = "") -> int:
        """Swap in a re-imported manuscript, keeping the audio cache.

        Unchanged sentences find their audio again through their cache keys; language
        overrides (matched by paragraph text) and sentence edits (matched by paragraph
        text and original sentence) are carried over, and so are spoken-form overrides (by
        printed text) and the chapter choices (:mod:`studio.project.restructure`). Returns how many were kept.
        """
        with self._write() as conn:
            overrides, edits, said = *bookdb.user_changes(conn), kept_overrides(conn)
            made = restructure.decisions(conn)  # chapter choices, replayed where the new text has them
            conn.execute("DELETE FROM chapters")  # cascades to paragraphs and sentences
            bookdb.write_book_row(conn, book, source_hash)
            bookdb.insert_book(conn, book)
            kept = restructure.replay(conn, made) + bookdb.carry_over_user_changes(conn, overrides, edits)
            kept += restore_overrides(conn, said)  # after the edits: an override follows the edited text
        if self.cast.analysed():
            self.cast.analyse()  # the lines found again; corrections kept where their text is
        log.info("re-imported %s; kept %d override(s)/edit(s)", book.source or "manuscript", kept)
        return kept

    def set_language_override(self, chapter_idx: int, paragraph_idx: int, lang: str | None) -> None:
        """Speak a paragraph in ``lang`` (ISO 639-1, e.g. ``"fr"``); None restores detection.

        Only that paragraph's sentences get new cache keys, so only they re-render.
        """
        if lang is not None and lang.strip():
            code = language_family(lang)  # the one rule: fr_FR -> fr
            if not code:
                raise ProjectError(f"'{lang}' is not a language code (use ISO 639-1, e.g. 'en', 'fr')")
            lang = code
        else:
            lang = None
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE paragraphs SET language_override = ? WHERE idx = ? AND chapter_id ="
                " (SELECT id FROM chapters WHERE idx = ?)",
                (lang, paragraph_idx, chapter_idx),
            )
            if cur.rowcount != 1:
                raise ProjectError(f"there is no paragraph {paragraph_idx} in chapter {chapter_idx}")

    def edit_sentence(self, sentence_id: int, text: str) -> None:
        """Replace what a sentence says (e.g. to fix a pronunciation); whitespace collapses.

        The paragraph's text follows (see ``book()``); only this sentence's key changes.
        """
        new = bookdb.normalize_space(text)
        if not new:
            raise ProjectError("a sentence cannot be empty; edit it to some text")
        with self._write() as conn:
            old = conn.execute("SELECT text FROM sentences WHERE id = ?", (sentence_id,)).fetchone()
            cur = conn.execute(
                "UPDATE sentences SET text = ?, updated_at = datetime('now') WHERE id = ?", (new, sentence_id)
            )
            if cur.rowcount != 1:
                raise ProjectError(f"there is no sentence with id {sentence_id}")
            follow_edit(conn, sentence_id, old[0], new)  # stressed words stay on the same words
        if self.cast.analysed():
            self.cast.analyse()  # the quoted parts follow the new text

    @property
    def spoken(self) -> ProjectSpoken:
        """Per-sentence spoken-form overrides (studio.project.spoken)."""
        return ProjectSpoken(self.db)

    @property
    def cast(self) -> ProjectCast:
        """Who speaks each quoted line, and with which voice (studio.project.cast)."""
        return ProjectCast(self.db)

    @property
    def lexicon(self) -> ProjectLexicon:
        """The project's pronunciation lexicon (see :mod:`studio.project.lexicon`)."""
        return ProjectLexicon(self.db, self.folder)

    # ------------------------------------------------------------ settings

    def settings(self) -> ProjectSettings:
        conn = self._conn()
        rows = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM settings")}
        mapping = dict(conn.execute("SELECT language, voice_id FROM language_voices"))
        return ProjectSettings.from_rows(rows, mapping)

    def update_settings(self, settings: ProjectSettings) -> None:
        """Store new settings; sentences whose keys change will render again."""
        with self._write() as conn:
            write_settings(conn, settings)

    def voice_for(self, language: str, settings: ProjectSettings | None = None) -> str:
        """Voice id for a language: its mapped voice, else the project's default voice."""
        settings = settings or self.settings()
        return voice_for(settings.language_voices, settings.voice_id, language)

    def set_voice_fingerprint(self, voice_id: str, fingerprint: str) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO voice_fingerprints (voice_id, fingerprint) VALUES (?, ?)"
                " ON CONFLICT(voice_id) DO UPDATE SET fingerprint = excluded.fingerprint",
                (voice_id, fingerprint),
            )

    def voice_fingerprints(self) -> dict[str, str]:
        return dict(self._conn().execute("SELECT voice_id, fingerprint FROM voice_fingerprints"))

    # ------------------------------------------------------------ state queries

    def renditions(self) -> dict[int, Rendition]:
        """What every sentence is rendered as (id -> :class:`Rendition`), for the project as it is now.

        Computed once per version of the project (:mod:`studio.project.rendition`): the
        database's rendition counter (bumped by triggers on every write that may change
        one), the user's lexicon file and whether the default voice and the characters' voices
        are installed here.
        Never call it on the GUI thread: a new version costs up to a second.
        """
        with self._read_lock:
            return self._renditions_at(versions(self._conn())[0])

    def _renditions_at(self, counter: int) -> dict[int, Rendition]:
        user = user_lexicon()
        known = self._rendered
        if known is not None and known[0] == counter and known[1] == user and _installed_as_before(known[2]):
            return known[3]
        version = self.version()
        overrides, directed = self.spoken.overrides(), directions(self.db)
        sql = ("SELECT s.id, s.text, COALESCE(p.language_override, s.language), p.kind FROM sentences s"
               " LEFT JOIN paragraphs p ON p.id = s.paragraph_id")
        casting = self.cast.state()
        inputs = {sid: SentenceInputs(text, lang, overrides.get(sid), d.audible() if (d := directed.get(sid)) else None,
                                      casting.parts.get(sid, ()), kind or "")
                  for sid, text, lang, kind in self._conn().execute(sql)}
        rendered = self._rendition_keeper.update(version, inputs)
        self._rendered = (counter, user, version, rendered)
        return rendered

    def version(self) -> Version:
        """What every sentence is rendered with besides its own inputs (read now, never kept)."""
        settings = self.settings()
        cast = {c.voice_id for c in self.cast.castings().values() if c.voice_id} if self.cast.enabled() else set()
        return Version.of(settings, book_language=self.book_language(), voice_language=voice_language(settings.voice_id),
                          fingerprints=self.voice_fingerprints(), lexicon=self.lexicon.effective(),
                          voice_languages={v: voice_language(v) or "" for v in sorted(cast)})

    def book_language(self) -> str:
        """The book's main language (without building the whole book)."""
        return str(self._conn().execute("SELECT language FROM book WHERE id = 1").fetchone()[0])

    def sentences(self, chapters: Iterable[int] | None = None) -> list[SentenceRow]:
        """Every spoken unit (titles included) in reading order, with effective state.

        Each row joins the sentence's render bookkeeping with its rendition
        (:meth:`renditions`); the book's joined rows are kept until the database's
        counters say a sentence or a rendition changed, so a read with nothing new
        costs a copy.
        """
        wanted = None if chapters is None else sorted(set(chapters))
        with self._read_lock:
            return list(self._rows_of(wanted))

    def _rows_of(self, chapters: list[int] | None) -> list[SentenceRow]:
        """The rows of ``chapters`` (None: the whole book's, kept until a counter moves).

        Why some chapters are joined apart when the kept rows are stale: the render and
        the desktop read a chapter after each sentence rendered, and joining the whole
        book each time would cost a large book's every row.
        """
        for _attempt in range(5):
            rendition, rows = versions(self._conn())
            rendered = self._renditions_at(rendition)
            kept = self._rows
            if kept is not None and kept[0] == rows and kept[1] is rendered:
                wanted = set(chapters or ())
                return kept[2] if chapters is None else [r for r in kept[2] if r.chapter in wanted]
            if chapters is None:
                joined = _join(self._conn().execute(_ROWS_SQL + _ORDER).fetchall(), rendered)
                if joined is not None:
                    self._rows = (rows, rendered, joined)
                    return joined
            else:
                where = f" WHERE c.idx IN ({', '.join('?' * len(chapters))})"
                joined = _join(self._conn().execute(_ROWS_SQL + where + _ORDER, chapters).fetchall(), rendered)
                if joined is not None:
                    return joined
        raise ProjectError(f"{self.folder}: the project keeps changing while it is read; try again")

    def pending(self, chapters: Iterable[int] | None = None) -> list[SentenceRow]:
        """Sentences still to render, in reading order (failed and interrupted included)."""
        return [r for r in self.sentences(chapters) if r.state != "done"]

    def counts(self, chapters: Iterable[int] | None = None) -> dict[str, int]:
        """Number of sentences per effective state (every state present, maybe 0)."""
        out = dict.fromkeys(STATES, 0)
        for r in self.sentences(chapters):
            out[r.state] += 1
        return out

    def chapters(self) -> list[ChapterInfo]:
        """The one reading of the book's chapters (merges, splits, names, inclusion) with their counts."""
        info = {c.index: [c.title, c.front_matter, 0, 0, 0, 0.0, c.name, c.included, c.reason]
                for c in self.chapter_control.all()}
        for r in self.sentences():
            entry = info[r.chapter]
            entry[2] += 1
            entry[3] += r.state == "done"
            entry[4] += r.state == "failed"
            entry[5] += (r.duration or 0.0) if r.state == "done" else 0.0
        return [ChapterInfo(i, *v) for i, v in info.items()]  # type: ignore[arg-type]

    # ------------------------------------------------------------ render bookkeeping

    def cache_entry(self, key: str) -> CacheEntry | None:
        row = self._conn().execute(
            "SELECT key, checksum, size, sample_rate, duration FROM cache_entries WHERE key = ?", (key,)
        ).fetchone()
        return CacheEntry(*row) if row else None

    def mark_rendering(self, sentence_ids: Iterable[int]) -> None:
        with self._write() as conn:
            conn.executemany(
                "UPDATE sentences SET state = 'rendering', reason = NULL, updated_at = datetime('now') WHERE id = ?",
                [(i,) for i in sentence_ids],
            )

    def reset_interrupted(self, reason: str = "interrupted") -> int:
        """``rendering`` rows left by a killed (or stopped) render go back to ``pending``.

        Call only while holding the render lock (no render can be in flight then).
        """
        with self._write() as conn:
            return conn.execute(
                "UPDATE sentences SET state = 'pending', reason = ? WHERE state = 'rendering'", (reason,)
            ).rowcount

    def mark_done(self, sentence_id: int, entry: CacheEntry, *, synthesized: bool, seed: int = 0) -> None:
        """Record finished audio (cache entry + sentence, and a new synthesis as a take
        drawn with noise ``seed``) in one commit."""
        take = self.takes.inputs(sentence_id) if synthesized else None
        with self._write() as conn:
            if take is not None:
                record_take(conn, self.folder, self.cache, entry, **take, seed=seed)
            upsert_entry(conn, entry)
            conn.execute(
                "UPDATE sentences SET state = 'done', reason = NULL, cache_key = ?, duration = ?, checksum = ?,"
                " synth_count = synth_count + ?, updated_at = datetime('now') WHERE id = ?",
                (entry.key, entry.duration, entry.checksum, int(synthesized), sentence_id),
            )

    @property
    def chapter_control(self) -> ProjectChapters:
        """Chapters included or excluded and renamed by the producer (see :mod:`studio.project.chapters`)."""
        return ProjectChapters(self.db)

    @property
    def takes(self) -> ProjectTakes:
        """Every synthesis of a sentence, kept; one chosen (see :mod:`studio.project.takes`)."""
        return ProjectTakes(self.db, self)

    def mark_failed(self, sentence_id: int, reason: str) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE sentences SET state = 'failed', reason = ?, updated_at = datetime('now') WHERE id = ?",
                (reason[:500], sentence_id),
            )

    def invalidate_key(self, key: str) -> int:
        """Forget a missing/corrupt cache file: its sentences go back to pending."""
        self.cache.discard(key)
        with self._write() as conn:
            n = conn.execute(
                "UPDATE sentences SET state = 'pending', cache_key = NULL, checksum = NULL, duration = NULL,"
                " reason = 'cached audio missing or corrupt' WHERE cache_key = ?",
                (key,),
            ).rowcount
            conn.execute("DELETE FROM cache_entries WHERE key = ?", (key,))
        return n



_ROWS_SQL = (
    "SELECT s.id, c.idx, p.idx, s.idx, s.ord, s.text, COALESCE(p.language_override, s.language),"
    " s.was_split, s.trailing, s.state, s.reason, s.cache_key, s.duration, s.checksum, s.synth_count, p.kind"
    " FROM sentences s JOIN chapters c ON c.id = s.chapter_id"
    " LEFT JOIN paragraphs p ON p.id = s.paragraph_id"
)
_ORDER = " ORDER BY s.ord"


def _join(rows: list[tuple], rendered: dict[int, Rendition]) -> list[SentenceRow] | None:
    """Rows with their renditions; None when a row was written after the renditions were read."""
    out = []
    for r in rows:
        x = rendered.get(r[0])
        if x is None or x.text != r[5] or x.language != r[6]:
            return None
        state = r[9]
        if state == "done" and r[11] != x.key:
            state = "pending"
        out.append(SentenceRow(
            id=r[0], chapter=r[1], paragraph=r[2], index=r[3], order=r[4], text=r[5], language=r[6],
            was_split=bool(r[7]), trailing=r[8], state=state, reason=r[10], cache_key=r[11],
            expected_key=x.key, duration=r[12], checksum=r[13], synth_count=r[14], lexicon=x.lexicon, said=x.said,
            spoken=x.spoken, synthesis=x.synthesis, cast=x.cast, parts=x.parts, kind=r[15] or "",
        ))
    return out


def _installed_as_before(version: Version) -> bool:
    """Whether the voices a version depends on speak what they spoke then: installing the
    default voice, or a character's voice, here changes what sentences are said in."""
    return (voice_language(version.voice_id) == version.voice_language
            and all((voice_language(v) or "") == family for v, family in version.voice_languages.items()))
