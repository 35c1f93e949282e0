"""SQLite schema of ``project.sqlite`` and its migrations.

Every table and column of the project lives here, the facets' too (takes,
chapter controls, structure): a migration step is one function below that applies
text from this module, and one line in ``MIGRATIONS``. Steps are additive and safe
to run twice (``CREATE TABLE IF NOT EXISTS``, :func:`_add_columns`), so steps
written in parallel merge in any order.

Why SQLite (WAL): a render commits after every sentence and a crash or kill must
lose at most the sentence in flight; WAL gives atomic, durable commits that stay
cheap enough to do per sentence, and lets a GUI read progress while the render
thread writes. ``PRAGMA user_version`` carries the schema version so an older
studio refuses (instead of corrupting) a project made by a newer one.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Callable

from studio.core.errors import ProjectError

log = logging.getLogger(__name__)

#: Version written by this code. Bump it and add a step to ``MIGRATIONS`` together.
SCHEMA_VERSION = 13

STATES = ("pending", "rendering", "done", "failed")

_SCHEMA_V1 = """
CREATE TABLE book (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    title        TEXT NOT NULL,
    author       TEXT NOT NULL,
    language     TEXT NOT NULL,
    source       TEXT NOT NULL DEFAULT '',
    source_hash  TEXT NOT NULL DEFAULT '',
    metadata     TEXT NOT NULL DEFAULT '{}',
    created_at   TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at   TEXT NOT NULL DEFAULT (datetime('now'))
);

CREATE TABLE chapters (
    id            INTEGER PRIMARY KEY,
    idx           INTEGER NOT NULL UNIQUE,
    title         TEXT NOT NULL,
    front_matter  INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE paragraphs (
    id                 INTEGER PRIMARY KEY,
    chapter_id         INTEGER NOT NULL REFERENCES chapters(id) ON DELETE CASCADE,
    idx                INTEGER NOT NULL,
    text               TEXT NOT NULL,
    language           TEXT NOT NULL,
    confidence         REAL NOT NULL,
    language_override  TEXT,
    UNIQUE (chapter_id, idx)
);

-- One row per audio file in cache/: many sentences may share one (same text,
-- language, voice and settings), and an entry outlives edits so undoing an edit
-- finds its old audio again.
CREATE TABLE cache_entries (
    key          TEXT PRIMARY KEY,
    checksum     TEXT NOT NULL,
    size         INTEGER NOT NULL,
    sample_rate  INTEGER NOT NULL,
    duration     REAL NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (datetime('now'))
);

-- paragraph_id NULL marks a chapter's spoken title (always ord-first in its chapter).
CREATE TABLE sentences (
    id             INTEGER PRIMARY KEY,
    chapter_id     INTEGER NOT NULL REFERENCES chapters(id) ON DELETE CASCADE,
    paragraph_id   INTEGER REFERENCES paragraphs(id) ON DELETE CASCADE,
    idx            INTEGER NOT NULL,
    ord            INTEGER NOT NULL UNIQUE,
    text           TEXT NOT NULL,
    original_text  TEXT NOT NULL,
    language       TEXT NOT NULL,
    was_split      INTEGER NOT NULL DEFAULT 0,
    trailing       TEXT NOT NULL DEFAULT '',
    state          TEXT NOT NULL DEFAULT 'pending'
                   CHECK (state IN ('pending', 'rendering', 'done', 'failed')),
    reason         TEXT,
    cache_key      TEXT REFERENCES cache_entries(key),
    duration       REAL,
    checksum       TEXT,
    synth_count    INTEGER NOT NULL DEFAULT 0,
    updated_at     TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX sentences_chapter ON sentences(chapter_id, ord);
CREATE INDEX sentences_paragraph ON sentences(paragraph_id, idx);
CREATE INDEX sentences_key ON sentences(cache_key);

-- Key/value, values are JSON: voice_id, backend, preset, synthesis, pauses, ...
CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

-- Which voice speaks passages in a language (ISO 639-1); unmapped -> default voice.
CREATE TABLE language_voices (
    language  TEXT PRIMARY KEY,
    voice_id  TEXT NOT NULL
);

-- sha256 of each voice's model file as last seen; part of every cache key so a
-- replaced model file never serves stale audio.
CREATE TABLE voice_fingerprints (
    voice_id     TEXT PRIMARY KEY,
    fingerprint  TEXT NOT NULL
);
"""

#: v2: the project's pronunciation lexicon (additive: a new table, nothing else
#: changes). ``grapheme_key`` is the grapheme as matched (casefolded unless the
#: entry is case-sensitive) so that re-adding a word replaces its entry.
_SCHEMA_V2_LEXICON = """
CREATE TABLE IF NOT EXISTS lexicon_entries (
    id              INTEGER PRIMARY KEY,
    grapheme        TEXT NOT NULL,
    grapheme_key    TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('alias', 'phoneme')),
    value           TEXT NOT NULL,
    case_sensitive  INTEGER NOT NULL DEFAULT 0,
    language        TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL DEFAULT '',
    updated_at      TEXT NOT NULL DEFAULT (datetime('now')),
    UNIQUE (grapheme_key, language, case_sensitive)
);
"""

#: v3: takes (every synthesis of a sentence kept; see :mod:`studio.project.takes`).
#: Older projects start with none; a sentence's current audio becomes its first take
#: the first time it is taken again.
_SCHEMA_V3_TAKES = """
CREATE TABLE IF NOT EXISTS takes (
    id           INTEGER PRIMARY KEY,
    key          TEXT NOT NULL,
    text         TEXT NOT NULL,
    language     TEXT NOT NULL,
    voice_id     TEXT NOT NULL,
    engine       TEXT NOT NULL,
    checksum     TEXT NOT NULL,
    size         INTEGER NOT NULL,
    sample_rate  INTEGER NOT NULL,
    duration     REAL NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS takes_words ON takes(text, language);
CREATE INDEX IF NOT EXISTS takes_key ON takes(key);
"""
#: v3: the producer's chapter controls (:mod:`studio.project.chapters`); NULL keeps
#: the import's choice (front matter left out) and the imported title.
_CHAPTER_CONTROL_COLUMNS = {"included": "INTEGER", "name": "TEXT"}

#: v4: where merged chapters began (see :mod:`studio.project.restructure`), where a
#: chapter came from, and why the import called a chapter front matter. Additive:
#: old rows read as imported.
_SCHEMA_V4_STRUCTURE = """
CREATE TABLE IF NOT EXISTS chapter_joins (
    paragraph_id    INTEGER PRIMARY KEY REFERENCES paragraphs(id) ON DELETE CASCADE,
    title           TEXT NOT NULL,
    front_matter    INTEGER NOT NULL,
    included        INTEGER,
    name            TEXT,
    origin          TEXT,
    front_reason    TEXT,
    title_sentence  INTEGER NOT NULL DEFAULT 0,
    kept_included   INTEGER
);
"""
_STRUCTURE_COLUMNS = {"origin": "TEXT", "front_reason": "TEXT"}

#: v5: each take's draw of the sampling noise (:mod:`studio.engine.noise`), so a new
#: take sounds different and a re-render of the same take the same. Old takes read as 0.
_TAKE_SEED_COLUMNS = {"seed": "INTEGER NOT NULL DEFAULT 0"}


def _apply_script(conn: sqlite3.Connection, script: str) -> None:
    """Run a multi-statement script inside the caller's transaction.

    ``Connection.executescript`` would COMMIT first, breaking atomic migrations.
    """
    for statement in _split_sql(script):
        conn.execute(statement)


def _split_sql(script: str) -> list[str]:
    lines = [ln for ln in script.splitlines() if not ln.strip().startswith("--")]
    parts, buf = [], ""
    for line in lines:
        buf += line + "\n"
        if sqlite3.complete_statement(buf):
            parts.append(buf.strip())
            buf = ""
    if buf.strip():
        parts.append(buf.strip())
    return parts


def _add_columns(conn: sqlite3.Connection, table: str, columns: dict[str, str]) -> None:
    """``ALTER TABLE ... ADD COLUMN`` for the columns ``table`` lacks, so a step run twice is harmless."""
    have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    for column, kind in columns.items():
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


def _v3_takes_and_chapter_control(conn: sqlite3.Connection) -> None:
    _apply_script(conn, _SCHEMA_V3_TAKES)
    _add_columns(conn, "chapters", _CHAPTER_CONTROL_COLUMNS)


def _v4_structure(conn: sqlite3.Connection) -> None:
    _apply_script(conn, _SCHEMA_V4_STRUCTURE)
    _add_columns(conn, "chapters", _STRUCTURE_COLUMNS)


def _v5_take_seeds(conn: sqlite3.Connection) -> None:
    _add_columns(conn, "takes", _TAKE_SEED_COLUMNS)


#: v6: the producer's spoken-form overrides (studio.project.spoken); none in older projects
_SCHEMA_V6_SPOKEN = """
CREATE TABLE IF NOT EXISTS spoken_overrides (
    sentence_id  INTEGER PRIMARY KEY REFERENCES sentences(id) ON DELETE CASCADE,
    printed      TEXT NOT NULL,
    spoken       TEXT NOT NULL,
    created_at   TEXT NOT NULL DEFAULT (datetime('now'))
);
"""


def _v6_spoken_overrides(conn: sqlite3.Connection) -> None:
    _apply_script(conn, _SCHEMA_V6_SPOKEN)


#: v7: direction for one sentence: the pause after it (studio.project.pauses), a pause
#: before it and a rate (studio.project.direction); none in older projects
_SCHEMA_V7_DIRECTION = """
CREATE TABLE IF NOT EXISTS sentence_pauses (
    sentence_id  INTEGER PRIMARY KEY REFERENCES sentences(id) ON DELETE CASCADE,
    after_s      REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sentence_direction (
    sentence_id   INTEGER PRIMARY KEY REFERENCES sentences(id) ON DELETE CASCADE,
    rate          REAL,
    pause_before  REAL
);
"""


def _v7_direction(conn: sqlite3.Connection) -> None:
    _apply_script(conn, _SCHEMA_V7_DIRECTION)


#: v8: proof-listening verdicts per sentence, tied to the audio they checked (studio.project.proofs)
_SCHEMA_V8_PROOFS = """
CREATE TABLE IF NOT EXISTS proof_results (
    sentence_id  INTEGER PRIMARY KEY REFERENCES sentences(id) ON DELETE CASCADE,
    cache_key    TEXT NOT NULL,
    checksum     TEXT NOT NULL,
    status       TEXT NOT NULL,
    severity     INTEGER NOT NULL DEFAULT 0,
    score        REAL NOT NULL DEFAULT 0,
    heard        TEXT NOT NULL DEFAULT '',
    flags        TEXT NOT NULL DEFAULT '[]',
    note         TEXT NOT NULL DEFAULT '',
    model        TEXT NOT NULL DEFAULT '',
    fine         INTEGER NOT NULL DEFAULT 0,
    checked_at   TEXT NOT NULL DEFAULT (datetime('now'))
);
"""


def _v8_proof_results(conn: sqlite3.Connection) -> None:
    _apply_script(conn, _SCHEMA_V8_PROOFS)


#: schema step: the emphasized words of a sentence (JSON list of word indices); none in older projects
EMPHASIS_SCHEMA = """
CREATE TABLE IF NOT EXISTS sentence_emphasis (
    sentence_id  INTEGER PRIMARY KEY REFERENCES sentences(id) ON DELETE CASCADE,
    words        TEXT NOT NULL
);
"""


def add_emphasis_table(conn: sqlite3.Connection) -> None:
    """The schema step (additive: a new table, whatever the other steps did)."""
    conn.execute(EMPHASIS_SCHEMA)


#: v10: two counters the store keeps its reads by, bumped by triggers so that a write
#: from any connection or process counts. ``rendition``: every write that may change
#: what a sentence is rendered as (:mod:`studio.project.rendition`; a pause, a take or a
#: render's bookkeeping leaves it alone). ``rows``: every write to the sentences,
#: paragraphs or chapters (a sentence rendered, a chapter renamed).
_RENDERED_SETTINGS = "('voice_id', 'backend', 'preset', 'synthesis', 'unvoiced')"
_VERSION_TRIGGERS = {
    # counter: {table: the events that bump it, each "EVENT [OF columns] [WHEN condition]"}
    "rendition": {
        "sentences": ("INSERT", "DELETE", ("UPDATE OF text, language, paragraph_id WHEN OLD.text IS NOT NEW.text"
                                           " OR OLD.language IS NOT NEW.language"
                                           " OR OLD.paragraph_id IS NOT NEW.paragraph_id")),
        "paragraphs": ("UPDATE OF language_override WHEN OLD.language_override IS NOT NEW.language_override",),
        "book": ("INSERT", "UPDATE OF language WHEN OLD.language IS NOT NEW.language"),
        # the settings a rendition depends on (ProjectSettings: not pauses, sample rate, Triton; not the queue)
        "settings": (f"INSERT WHEN NEW.key IN {_RENDERED_SETTINGS}", f"DELETE WHEN OLD.key IN {_RENDERED_SETTINGS}",
                     f"UPDATE WHEN NEW.key IN {_RENDERED_SETTINGS} AND OLD.value IS NOT NEW.value"),
        "language_voices": ("INSERT", "DELETE", "UPDATE"),
        "voice_fingerprints": ("INSERT", "DELETE", "UPDATE WHEN OLD.fingerprint IS NOT NEW.fingerprint"),
        "lexicon_entries": ("INSERT", "DELETE", "UPDATE"),
        "spoken_overrides": ("INSERT", "DELETE", "UPDATE"),
        "sentence_direction": ("INSERT WHEN NEW.rate IS NOT NULL", "DELETE WHEN OLD.rate IS NOT NULL",
                               "UPDATE OF rate WHEN OLD.rate IS NOT NEW.rate"),
        "sentence_emphasis": ("INSERT", "DELETE", "UPDATE"),
    },
    "rows": {table: ("INSERT", "DELETE", "UPDATE") for table in ("sentences", "paragraphs", "chapters")},
}


def _v10_versions(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS versions (id INTEGER PRIMARY KEY CHECK (id = 1),"
                 " rendition INTEGER NOT NULL DEFAULT 0, rows INTEGER NOT NULL DEFAULT 0)")
    conn.execute("INSERT OR IGNORE INTO versions (id) VALUES (1)")
    _add_triggers(conn, _VERSION_TRIGGERS)


def _add_triggers(conn: sqlite3.Connection, spec: dict[str, dict[str, tuple[str, ...]]], tag: str = "") -> None:
    """Triggers that bump the ``versions`` counters on the events ``spec`` names."""
    for counter, tables in spec.items():
        for table, events in tables.items():
            for i, event in enumerate(events):
                what, _, when = event.partition(" WHEN ")
                conn.execute(f"CREATE TRIGGER IF NOT EXISTS {counter}_{table}{tag}_{i} AFTER {what} ON {table}"
                             + (f" WHEN {when}" if when else "")
                             + f" BEGIN UPDATE versions SET {counter} = {counter} + 1; END")


def versions(conn: sqlite3.Connection) -> tuple[int, int]:
    """``(rendition, rows)``: the counters the triggers bump (see ``_VERSION_TRIGGERS``)."""
    row = conn.execute("SELECT rendition, rows FROM versions WHERE id = 1").fetchone()
    return int(row[0]), int(row[1])


#: v11: the cast (studio.project.cast): each sentence's quoted parts and who speaks them, the
#: producer's castings and merged names (``alias_of``: this name is that character), corrected
#: lines; casting itself, and whether the lines were found, are settings. Three tables: the
#: whole schema must still fit a small disk (tests/rendering/test_crash_recovery.py fills a 640 kB one).
_SCHEMA_V11_CAST = """
CREATE TABLE IF NOT EXISTS cast_lines (
    sentence_id  INTEGER PRIMARY KEY REFERENCES sentences(id) ON DELETE CASCADE,
    parts        TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cast_members (
    name        TEXT PRIMARY KEY,
    voice_id    TEXT NOT NULL DEFAULT '',
    speaker     INTEGER,
    pitch       REAL NOT NULL DEFAULT 0,
    pace        REAL NOT NULL DEFAULT 1,
    expressive  REAL NOT NULL DEFAULT 1,
    alias_of    TEXT
);
CREATE TABLE IF NOT EXISTS cast_corrections (
    paragraph_text  TEXT NOT NULL,
    sentence_text   TEXT NOT NULL,
    name            TEXT NOT NULL,
    PRIMARY KEY (paragraph_text, sentence_text)
);
"""


#: what a casting changes besides its tables: the cast's setting (turned on or off)
_CAST_TRIGGERS = {
    "rendition": {
        "cast_lines": ("INSERT", "DELETE", "UPDATE"),
        "cast_members": ("INSERT", "DELETE", "UPDATE"),
        "settings": ("INSERT WHEN NEW.key = 'casting'", "DELETE WHEN OLD.key = 'casting'",
                     "UPDATE WHEN NEW.key = 'casting' AND OLD.value IS NOT NEW.value"),
    },
}


def _v11_cast(conn: sqlite3.Connection) -> None:
    _apply_script(conn, _SCHEMA_V11_CAST)
    _add_triggers(conn, _CAST_TRIGGERS, "cast")


#: v12: the producer's undo history (studio.project.undo): each step's label, and the statements that
#: undo (or, once undone, redo) it, logged by each connection's TEMP triggers
_SCHEMA_V12_UNDO = """
CREATE TABLE IF NOT EXISTS undo_steps (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    label   TEXT NOT NULL,
    undone  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS undo_log (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    step  INTEGER,
    sql   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS undo_log_step ON undo_log(step);
"""


#: v13: what a paragraph is when not prose (a note, a caption, a table's row...: studio.text.content; NULL: prose),
#: and the settings that say which kinds are read: a change of them changes what a sentence is rendered as
_PARAGRAPH_KIND_COLUMNS = {"kind": "TEXT"}
CONTENT_SETTINGS = ("notes", "images", "tables", "code")
_CONTENT_KEYS = "(" + ", ".join(f"'{k}'" for k in CONTENT_SETTINGS) + ")"
_CONTENT_TRIGGERS = {
    "rendition": {
        "settings": (f"INSERT WHEN NEW.key IN {_CONTENT_KEYS}", f"DELETE WHEN OLD.key IN {_CONTENT_KEYS}",
                     f"UPDATE WHEN NEW.key IN {_CONTENT_KEYS} AND OLD.value IS NOT NEW.value"),
    },
}


def _v13_content(conn: sqlite3.Connection) -> None:
    _add_columns(conn, "paragraphs", _PARAGRAPH_KIND_COLUMNS)
    _add_triggers(conn, _CONTENT_TRIGGERS, "content")


#: ``MIGRATIONS[v]`` upgrades a database at version ``v`` to ``v + 1`` (inside one
#: transaction). Version 0 is a brand-new, empty file.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    0: lambda conn: _apply_script(conn, _SCHEMA_V1),
    1: lambda conn: _apply_script(conn, _SCHEMA_V2_LEXICON),
    2: _v3_takes_and_chapter_control,  # takes; chapters included / renamed
    3: _v4_structure,  # merged and split chapters
    4: _v5_take_seeds,  # each take's draw of the sampling noise
    5: _v6_spoken_overrides,  # the producer's spoken-form overrides
    6: _v7_direction,  # a sentence's pause after, pause before and rate
    7: _v8_proof_results,  # proof-listening verdicts per sentence
    8: add_emphasis_table,  # the stressed words of a sentence (read by studio.project.emphasis)
    9: _v10_versions,  # counters of what a sentence is rendered as, and of the sentences' rows
    10: _v11_cast,  # the cast: quoted parts, castings, merged names, corrections
    11: lambda conn: _apply_script(conn, _SCHEMA_V12_UNDO),  # the undo history
    12: _v13_content,  # paragraphs of a kind (notes, captions, tables...) and the settings that read them
}


def configure(conn: sqlite3.Connection) -> None:
    """Per-connection pragmas: WAL, foreign keys, a busy timeout for readers/writers."""
    conn.execute("PRAGMA busy_timeout = 30000")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        log.warning("could not enable WAL journal (got %s); is the project on a network drive?", mode)
    # NORMAL is durable against process crashes and kills in WAL mode; only a power
    # cut can lose the last few commits, and those are re-rendered on resume.
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def ensure_schema(conn: sqlite3.Connection, where: str) -> None:
    """Create or migrate the schema to ``SCHEMA_VERSION``; ProjectError if too new.

    ``conn`` must be in autocommit mode (``isolation_level=None``); the whole
    upgrade runs in one IMMEDIATE transaction so a crash leaves the old version.
    """
    version = user_version(conn)
    if version > SCHEMA_VERSION:
        raise ProjectError(
            f"{where} was saved by a newer version of studio (project schema {version}, "
            f"this version understands up to {SCHEMA_VERSION}); update studio to open it"
        )
    if version == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = user_version(conn)  # another process may have migrated meanwhile
        if version == 0:
            tables = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
            ).fetchone()[0]
            if tables:
                raise ProjectError(f"{where} is an SQLite file but not a studio project")
        new = version == 0  # a new project is made at the latest schema: one line, not one per step
        if new:
            log.info("new project %s at schema %d", where, SCHEMA_VERSION)
        while version < SCHEMA_VERSION:
            (log.debug if new else log.info)("migrating %s from schema %d to %d", where, version, version + 1)
            MIGRATIONS[version](conn)
            version += 1
            conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
