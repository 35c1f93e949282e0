"""The render queue as the project keeps it: the jobs still to do, their order, paused or not.

Why in the project (and not in the app's settings): the queue is about this book.
A producer who quits with a chapter waiting, or opens another book for an hour,
expects the same queue back, paused if it was paused, when the book is opened
again -- on any machine the project folder is copied to.

Why the ``settings`` key/value table and no table of its own: a queue is a short
list (a job names chapters or a few sentence ids, never the whole book), written
only when jobs are added, finish, move or the queue is paused; one JSON value
fits, needs no migration step, and an older studio simply ignores the key
(:class:`~studio.project.settings.ProjectSettings` reads only the keys it knows).

The jobs are plain mappings here: what a job *is* belongs to the layer that runs
it (``studio.desktop``); this module stores and returns them untouched, so new job
kinds need nothing from it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from studio.project.db import ProjectDb

log = logging.getLogger(__name__)

QUEUE_KEY = "render_queue"


@dataclass(frozen=True)
class StoredQueue:
    """Jobs in the order they will run (each a JSON-ready mapping) and the pause flag."""

    jobs: tuple[Mapping[str, Any], ...] = ()
    paused: bool = False


def load_queue(db: ProjectDb) -> StoredQueue:
    """The stored queue; an empty one when none was stored or the value is unreadable (logged)."""
    row = db.read().execute("SELECT value FROM settings WHERE key = ?", (QUEUE_KEY,)).fetchone()
    if row is None:
        return StoredQueue()
    try:
        value = json.loads(row[0])
        jobs = tuple(dict(j) for j in value.get("jobs", ()))
        return StoredQueue(jobs, bool(value.get("paused", False)))
    except (ValueError, TypeError, AttributeError) as err:
        log.warning("the stored render queue is unreadable (%s); starting with an empty queue", err)
        return StoredQueue()


def save_queue(db: ProjectDb, jobs: Sequence[Mapping[str, Any]], paused: bool) -> None:
    """Replace the stored queue (one small write)."""
    value = json.dumps({"jobs": [dict(j) for j in jobs], "paused": bool(paused)})
    with db.write() as conn:
        conn.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (QUEUE_KEY, value),
        )


def sentence_chapters(db: ProjectDb, sentence_ids: Iterable[int]) -> list[int]:
    """The chapters (0-based) holding these sentences, from the rows alone.

    Why not ``project.sentences()``: after a render's bookkeeping that joins every
    row of the book again, and a one-sentence re-render of a 9,000-sentence book
    must not pay for the whole book.
    """
    ids = sorted(set(sentence_ids))
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows = db.read().execute(
        f"SELECT DISTINCT c.idx FROM sentences s JOIN chapters c ON c.id = s.chapter_id WHERE s.id IN ({marks})", ids)
    return sorted(r[0] for r in rows)
