"""The pause after one sentence, set by the producer (dragged or typed in the waveform).

Why stored apart from the audio and its cache key: a pause is silence export puts
*between* clips, so changing one re-renders nothing; the sentence's audio, its
key and its takes stay as they are. Export (:func:`studio.audio.assemble.iter_chapter`
through ``Clip.pause_after``), the duration estimates
(:func:`studio.project.duration.chapter_seconds`) and the waveform read the same
table, so the file is longer by exactly the added pause and the tree says so.

A sentence without a row gets the project's pause (sentence or paragraph pause,
:class:`~studio.audio.assemble.Pauses`). Rows go with their sentence (a re-import
that drops a sentence drops its pause).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from studio.core.errors import ProjectError

if TYPE_CHECKING:
    from studio.project.db import ProjectDb

#: the longest pause a producer can set after one sentence (seconds)
MAX_PAUSE_S = 30.0

def pauses_after(db: ProjectDb, sentence_ids: Iterable[int] | None = None) -> dict[int, float]:
    """Sentence id -> the pause after it, for the sentences that have one (all, or these)."""
    conn = db.read()
    if sentence_ids is None:
        return {int(i): float(s) for i, s in conn.execute("SELECT sentence_id, after_s FROM sentence_pauses")}
    ids = sorted(set(sentence_ids))
    out: dict[int, float] = {}
    for at in range(0, len(ids), 500):
        chunk = ids[at:at + 500]
        marks = ", ".join("?" * len(chunk))
        out.update({int(i): float(s) for i, s in conn.execute(
            f"SELECT sentence_id, after_s FROM sentence_pauses WHERE sentence_id IN ({marks})", chunk)})
    return out


def set_pause_after(db: ProjectDb, sentence_id: int, seconds: float | None) -> None:
    """Set the pause after a sentence (None: back to the project's pause)."""
    if seconds is not None and not 0.0 <= float(seconds) <= MAX_PAUSE_S:
        raise ProjectError(f"a pause must be between 0 and {MAX_PAUSE_S:g} seconds, got {seconds:g}")
    with db.write() as conn:
        if conn.execute("SELECT 1 FROM sentences WHERE id = ?", (sentence_id,)).fetchone() is None:
            raise ProjectError(f"there is no sentence with id {sentence_id}")
        if seconds is None:
            conn.execute("DELETE FROM sentence_pauses WHERE sentence_id = ?", (sentence_id,))
        else:
            conn.execute("INSERT INTO sentence_pauses (sentence_id, after_s) VALUES (?, ?) ON CONFLICT(sentence_id)"
                         " DO UPDATE SET after_s = excluded.after_s", (sentence_id, round(float(seconds), 3)))
