"""The project's pronunciation lexicon (table ``lexicon_entries``) and the user's one.

Why two: a name that recurs across a series ("Nguyen" -> "Win") belongs to the
producer, not to one book, so a per-user lexicon (a PLS file) is inherited by every
project; a project entry for the same word (same grapheme, case rule and language)
overrides it. What a sentence ends up using is
``project_lexicon.inherit(user_lexicon)``, matched by :mod:`studio.core.lexicon`.

Why the project's entries live in SQLite and not in a PLS file next to it: they
are part of what a render depends on (each sentence's cache key carries the digest
of the entries it contains), and the database is what commits atomically with
everything else a render records.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

from studio.core.errors import ProjectError
from studio.core.language import language_family
from studio.core.paths import config_dir
from studio.core.lexicon import Lexicon, LexiconEntry, normalize_grapheme
from studio.project.db import ProjectDb
from studio.text.formats.pls import LexiconFormatError, read_pls_file, write_pls_file

log = logging.getLogger(__name__)

#: Overrides where the user's lexicon file lives (tests, several producers on one account).
USER_LEXICON_ENV = "STUDIO_USER_LEXICON"

_USER_CACHE: dict[str, tuple[tuple[int, int], Lexicon]] = {}
#: project folder -> its last effective lexicon (see ProjectLexicon.effective)
_EFFECTIVE: dict[str, Lexicon] = {}


def user_lexicon_path() -> Path:
    """``$STUDIO_USER_LEXICON``, else ``lexicon.pls`` in the settings folder
    (:func:`studio.core.paths.config_dir`: ``~/.config/studio`` on Linux)."""
    env = os.environ.get(USER_LEXICON_ENV)
    if env:
        return Path(env).expanduser()
    return config_dir() / "lexicon.pls"


def user_lexicon() -> Lexicon:
    """The user's lexicon (empty when there is none), re-read only when the file changes.

    A broken file is logged and ignored rather than stopping every project: the
    user fixes it with ``studio lexicon ... --user``.
    """
    path = user_lexicon_path()
    try:
        st = path.stat()
    except OSError:
        return Lexicon()
    stamp = (st.st_size, st.st_mtime_ns)
    cached = _USER_CACHE.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        lexicon = Lexicon.of(read_pls_file(path).entries)
    except LexiconFormatError as err:
        log.warning("ignoring the user lexicon %s: %s", path, err)
        lexicon = Lexicon()
    _USER_CACHE[str(path)] = (stamp, lexicon)
    return lexicon


def save_user_lexicon(lexicon: Lexicon) -> Path:
    """Write the user's lexicon file (made with its folder if needed)."""
    path = user_lexicon_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_pls_file(path, lexicon.entries)
    return path


class ProjectLexicon:
    """Read and edit one project's entries (each edit is one transaction).

    Uses the project's database handle (``project.db``): entries are project state
    like settings, and must commit with the same guarantees.
    """

    def __init__(self, db: ProjectDb, folder: Path) -> None:
        self.db = db
        self.folder = folder

    def entries(self) -> Lexicon:
        """The project's own entries."""
        rows = self.db.read().execute(
            "SELECT grapheme, kind, value, case_sensitive, language FROM lexicon_entries ORDER BY grapheme_key"
        )
        return Lexicon.of(LexiconEntry(g, k, v, bool(cs), lang or None) for g, k, v, cs, lang in rows)

    def effective(self) -> Lexicon:
        """What sentences use: the user's lexicon with the project's entries on top.

        The same entries give back the same :class:`Lexicon` object, so its compiled
        patterns are reused across the many ``Project.sentences()`` calls of a session
        instead of being rebuilt for each.
        """
        merged = self.entries().inherit(user_lexicon())
        memo_key = str(self.folder)
        cached = _EFFECTIVE.get(memo_key)
        if cached is not None and cached == merged:
            return cached
        _EFFECTIVE[memo_key] = merged
        return merged

    def sources(self) -> dict[tuple[str, str, bool], str]:
        """Where each project entry came from (``"user"`` typed, a file name, ``"epub"``)."""
        out = {}
        for g, lang, cs, src in self.db.read().execute(
            "SELECT grapheme, language, case_sensitive, source FROM lexicon_entries"
        ):
            out[LexiconEntry(g, "alias", "-", bool(cs), lang or None).key] = src
        return out

    def add(self, entries: Iterable[LexiconEntry], *, source: str = "user") -> int:
        """Add or replace entries (same grapheme, case rule, language); returns how many."""
        rows = [(e.grapheme, e.key[0], e.kind, e.value, int(e.case_sensitive), e.language or "", source)
                for e in entries]
        with self.db.write() as conn:
            conn.executemany(
                "INSERT INTO lexicon_entries (grapheme, grapheme_key, kind, value, case_sensitive, language, source)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (grapheme_key, language, case_sensitive) DO UPDATE SET"
                " grapheme = excluded.grapheme, kind = excluded.kind, value = excluded.value,"
                " source = excluded.source, updated_at = datetime('now')",
                rows,
            )
        return len(rows)

    def add_missing(self, entries: Iterable[LexiconEntry], *, source: str) -> int:
        """Add only entries the project has no entry for (an import never overwrites the
        producer's own choices); returns how many were added."""
        have = {e.key for e in self.entries().entries}
        fresh = [e for e in entries if e.key not in have]
        return self.add(fresh, source=source) if fresh else 0

    def remove(self, grapheme: str, *, language: str | None = None) -> int:
        """Remove the entries for ``grapheme`` (any case rule; only ``language``'s when
        given). ProjectError when there is none, so a typo is not silently ignored."""
        g = normalize_grapheme(grapheme)
        sql = "DELETE FROM lexicon_entries WHERE (grapheme = ? OR grapheme_key = ?)"
        params: list[str] = [g, g.casefold()]
        if language is not None:
            sql += " AND language = ?"
            params.append(language_family(language) or "")
        with self.db.write() as conn:
            n = conn.execute(sql, params).rowcount
        if not n:
            raise ProjectError(f"the project's lexicon has no entry for {grapheme!r}")
        return n

