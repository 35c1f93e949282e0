"""Undo and redo of the producer's edits, kept in the project's database.

Why triggers and not an inverse per command: an edit touches more than its own row
(a text edit moves the stressed words and the cast's quoted parts, a merge moves
paragraphs, sentences and chapters, a chapter's inclusion, a pronunciation, a cast
member's voice...). Writing and keeping an inverse for each would miss what a later
change adds. Instead each connection carries TEMP triggers (the technique of
SQLite's own "undo/redo" note) that log, for every row a tracked table loses, gains
or changes, the SQL statement that puts it back. An edit run inside
:meth:`UndoHistory.step` claims the statements logged meanwhile as one step; undo
runs a step's statements backwards in one transaction, and the statements the
triggers log while it does so are the step's redo. Both live in ``undo_log`` and
``undo_steps`` (schema v12), so the history survives a restart.

What is tracked is what a producer decides -- text, structure, languages, spoken
forms, pronunciations, direction, pauses, the cast, the book's details and the
settings that shape the audio -- never a render's bookkeeping (states, cache keys,
takes, proof verdicts): undoing an edit brings the old text back, and its old audio
with it from the cache.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

#: steps kept (the oldest are forgotten beyond this)
MAX_STEPS = 200
#: settings keys a producer sets (the queue, the measured speed and the like are not edits)
EDITED_SETTINGS = ("voice_id", "backend", "preset", "synthesis", "unvoiced", "pauses", "casting",
                   "read_front_matter", "title", "author", "narrator", "producer", "recording_year", "rights",
                   "output_sample_rate", "notes", "images", "tables", "code")
#: table -> the columns whose update is an edit (None: every column; inserts and deletes always count)
TRACKED: dict[str, tuple[str, ...] | None] = {
    "chapters": None,
    "chapter_joins": None,
    "paragraphs": ("chapter_id", "idx", "text", "language_override"),
    "sentences": ("chapter_id", "paragraph_id", "idx", "ord", "text", "original_text"),
    "lexicon_entries": None,
    "spoken_overrides": None,
    "sentence_pauses": None,
    "sentence_direction": None,
    "sentence_emphasis": None,
    "language_voices": None,
    "cast_lines": None,
    "cast_members": None,
    "cast_corrections": None,
    "settings": None,
}
#: tables whose rows are created with the book (an import): their inserts and deletes are not edits
BOOK_ROWS = ("sentences",)


def install_triggers(conn: sqlite3.Connection) -> None:
    """This connection's TEMP triggers that log the inverse of every tracked change (idempotent)."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "undo_log" not in tables:
        return  # an older schema being migrated by another connection: nothing to log into yet
    for table, watched in TRACKED.items():
        if table not in tables:
            continue
        cols = [r[1] for r in conn.execute(f"PRAGMA main.table_info({table})")]
        only = f" WHEN NEW.key IN {EDITED_SETTINGS!r}" if table == "settings" else ""
        only_old = f" WHEN OLD.key IN {EDITED_SETTINGS!r}" if table == "settings" else ""
        names = ", ".join(["rowid", *cols])
        values = "||','||".join(["OLD.rowid", *(f"quote(OLD.{c})" for c in cols)])
        if table not in BOOK_ROWS:
            _trigger(conn, f"{table}_ins", f"AFTER INSERT ON main.{table}{only}",
                     f"'DELETE FROM {table} WHERE rowid='||NEW.rowid")
            _trigger(conn, f"{table}_del", f"AFTER DELETE ON main.{table}{only_old}",
                     f"'INSERT INTO {table} ({names}) VALUES('||{values}||')'")
        edited = [c for c in (watched or cols) if c in cols]
        changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in edited)
        sets = "||','||".join(f"'{c}='||quote(OLD.{c})" for c in edited)
        when = f"({changed})" + (f" AND NEW.key IN {EDITED_SETTINGS!r}" if table == "settings" else "")
        _trigger(conn, f"{table}_upd", f"AFTER UPDATE ON main.{table} WHEN {when}",
                 f"'UPDATE {table} SET '||{sets}||' WHERE rowid='||OLD.rowid")


def _trigger(conn: sqlite3.Connection, name: str, event: str, statement: str) -> None:
    conn.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS undo_{name} {event} "
                 f"BEGIN INSERT INTO undo_log (sql) VALUES ({statement}); END")


class HistoryDb(Protocol):
    """What the history needs of :class:`studio.project.db.ProjectDb` (which installs the triggers)."""

    def read(self) -> sqlite3.Connection: ...
    def write(self) -> AbstractContextManager[sqlite3.Connection]: ...
    def exclusive(self) -> AbstractContextManager[None]: ...


class UndoHistory:
    """A project's undo and redo steps (each a label and the statements that undo or redo it)."""

    def __init__(self, db: HistoryDb) -> None:
        self.db = db

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        """Run an edit (its own write transactions) as one step: no other write comes between."""
        with self.db.exclusive():
            start = self._last_seq()
            yield
            with self.db.write() as conn:
                if self._last_seq(conn) == start:
                    return  # nothing changed: no step
                conn.execute("DELETE FROM undo_log WHERE step IS NULL AND seq <= ?", (start,))  # not edits
                self._forget_redo(conn)
                cur = conn.execute("INSERT INTO undo_steps (label) VALUES (?)", (label,))
                conn.execute("UPDATE undo_log SET step = ? WHERE step IS NULL AND seq > ?", (cur.lastrowid, start))
                self._trim(conn)

    def undo(self) -> str | None:
        """Undo the last step; its label, or None when there is none."""
        return self._replay(undone=False)

    def redo(self) -> str | None:
        """Redo the last undone step; its label, or None when there is none."""
        return self._replay(undone=True)

    def next_labels(self) -> tuple[str | None, str | None]:
        """``(what Undo would undo, what Redo would redo)``."""
        conn = self.db.read()
        undo = conn.execute("SELECT label FROM undo_steps WHERE undone = 0 ORDER BY id DESC LIMIT 1").fetchone()
        redo = conn.execute("SELECT label FROM undo_steps WHERE undone = 1 ORDER BY id LIMIT 1").fetchone()
        return (undo[0] if undo else None, redo[0] if redo else None)

    def _replay(self, *, undone: bool) -> str | None:
        order = "ASC" if undone else "DESC"  # redo the oldest undone step; undo the newest done one
        with self.db.exclusive(), self.db.write() as conn:
            row = conn.execute(f"SELECT id, label FROM undo_steps WHERE undone = ? ORDER BY id {order} LIMIT 1",
                               (int(undone),)).fetchone()
            if row is None:
                return None
            step, label = row
            conn.execute("DELETE FROM undo_log WHERE step IS NULL")
            start = self._last_seq(conn)
            for (sql,) in conn.execute("SELECT sql FROM undo_log WHERE step = ? ORDER BY seq DESC", (step,)).fetchall():
                conn.execute(sql)
            conn.execute("DELETE FROM undo_log WHERE step = ? AND seq <= ?", (step, start))
            conn.execute("UPDATE undo_log SET step = ? WHERE step IS NULL AND seq > ?", (step, start))
            conn.execute("UPDATE undo_steps SET undone = ? WHERE id = ?", (int(not undone), step))
            return str(label)

    def _last_seq(self, conn: sqlite3.Connection | None = None) -> int:
        conn = conn or self.db.read()
        return int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM undo_log").fetchone()[0])

    @staticmethod
    def _forget_redo(conn: sqlite3.Connection) -> None:
        """A new edit: the steps undone before it cannot be redone any more."""
        conn.execute("DELETE FROM undo_log WHERE step IN (SELECT id FROM undo_steps WHERE undone = 1)")
        conn.execute("DELETE FROM undo_steps WHERE undone = 1")

    @staticmethod
    def _trim(conn: sqlite3.Connection) -> None:
        old = conn.execute("SELECT id FROM undo_steps ORDER BY id DESC LIMIT -1 OFFSET ?", (MAX_STEPS,)).fetchall()
        for (step,) in old:
            conn.execute("DELETE FROM undo_log WHERE step = ?", (step,))
            conn.execute("DELETE FROM undo_steps WHERE id = ?", (step,))


__all__ = ["EDITED_SETTINGS", "MAX_STEPS", "TRACKED", "UndoHistory", "install_triggers"]
