"""The producer's spoken-form overrides: what a sentence is spoken as instead of the normaliser's form.

Why the spoken form is what the audio cache key covers: it is what the voice is given.
A sentence whose spoken form equals its printed text keeps exactly the key it had
before normalisation existed (old projects keep their audio), and a change to the
normaliser or an override re-renders exactly the sentences whose spoken form changed.

Overrides are stored per sentence together with the printed text they were made for:
an override whose sentence has since been edited no longer applies (it was written
for other words); a re-import gives each to the sentence with the same printed text.
"""

from __future__ import annotations

import sqlite3

from studio.core.errors import ProjectError
from studio.project.db import ProjectDb


class ProjectSpoken:
    """A project's spoken-form overrides (``project.spoken``)."""

    def __init__(self, db: ProjectDb) -> None:
        self.db = db

    def overrides(self) -> dict[int, str]:
        """sentence id -> override, for overrides still matching their sentence's text."""
        rows = self.db.read().execute(
            "SELECT o.sentence_id, o.spoken FROM spoken_overrides o JOIN sentences s ON s.id = o.sentence_id"
            " WHERE s.text = o.printed"
        )
        return dict(rows)

    def set(self, sentence_id: int, spoken: str | None) -> None:
        """Speak sentence ``sentence_id`` as ``spoken``; ``None`` or blank goes back to the normaliser.

        Only that sentence's cache key changes, so only it is rendered again.
        """
        words = " ".join((spoken or "").split())
        with self.db.write() as conn:
            row = conn.execute("SELECT text FROM sentences WHERE id = ?", (sentence_id,)).fetchone()
            if row is None:
                raise ProjectError(f"there is no sentence with id {sentence_id}")
            if not words or words == row[0]:
                conn.execute("DELETE FROM spoken_overrides WHERE sentence_id = ?", (sentence_id,))
                if words == row[0]:
                    # "say it as printed": stored, so the normaliser does not change it again
                    conn.execute(
                        "INSERT INTO spoken_overrides (sentence_id, printed, spoken) VALUES (?, ?, ?)",
                        (sentence_id, row[0], words),
                    )
                return
            conn.execute(
                "INSERT INTO spoken_overrides (sentence_id, printed, spoken) VALUES (?, ?, ?)"
                " ON CONFLICT(sentence_id) DO UPDATE SET printed = excluded.printed, spoken = excluded.spoken,"
                " created_at = datetime('now')",
                (sentence_id, row[0], words),
            )


def kept_overrides(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """``(printed, spoken)`` of every override in force, in reading order: what a re-import keeps."""
    return list(conn.execute(
        "SELECT o.printed, o.spoken FROM spoken_overrides o JOIN sentences s ON s.id = o.sentence_id"
        " WHERE s.text = o.printed ORDER BY s.ord"
    ))


def restore_overrides(conn: sqlite3.Connection, kept: list[tuple[str, str]]) -> int:
    """After a re-import, give each kept override to the first sentence (in reading order)
    with the same printed text that has none yet. Returns how many found their sentence."""
    restored = 0
    for printed, spoken in kept:
        row = conn.execute(
            "SELECT s.id FROM sentences s LEFT JOIN spoken_overrides o ON o.sentence_id = s.id"
            " WHERE s.text = ? AND o.sentence_id IS NULL ORDER BY s.ord LIMIT 1", (printed,)
        ).fetchone()
        if row is not None:
            conn.execute("INSERT INTO spoken_overrides (sentence_id, printed, spoken) VALUES (?, ?, ?)",
                         (row[0], printed, spoken))
            restored += 1
    return restored
