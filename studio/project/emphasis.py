"""Emphasis on chosen words of a sentence: which words, stored per sentence.

Why word indices of the sentence as the producer reads it (its text split at white
space): that is what the direction dialog shows and what an EPUB's
``voice-stress`` span marks; the voice is given the spoken form
(:mod:`studio.project.spoken`: "Dr." -> "Doctor", "1851" -> "eighteen fifty-one"),
so :func:`spoken_indices` carries the indices over to it when the render asks. The
spoken indices enter the sentence's synthesis settings and so its cache key
(:meth:`~studio.engine.base.SynthesisSettings.cache_token`): exactly the sentences
whose emphasis changed render again. How it is heard: :mod:`studio.engine.emphasis`.
"""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
from typing import TYPE_CHECKING, Iterable, Sequence

from studio.core.errors import ProjectError

if TYPE_CHECKING:
    from studio.project.db import ProjectDb

def emphases(db: ProjectDb) -> dict[int, tuple[int, ...]]:
    """Every sentence with emphasis (id -> its word indices, ascending)."""
    rows = db.read().execute("SELECT sentence_id, words FROM sentence_emphasis")
    return {int(i): tuple(json.loads(w)) for i, w in rows}


def set_emphasis(db: ProjectDb, sentence_ids: Iterable[int], words: Sequence[int] | dict[int, Sequence[int]]) -> int:
    """Stress ``words`` (word indices; empty clears) in each sentence, or per sentence when a
    mapping id -> indices is given; returns how many sentences were set."""
    ids = sorted(set(sentence_ids))
    with db.write() as conn:
        for sid in ids:
            row = conn.execute("SELECT text FROM sentences WHERE id = ?", (sid,)).fetchone()
            if row is None:
                raise ProjectError(f"there is no sentence with id {sid}")
            chosen = words.get(sid, ()) if isinstance(words, dict) else words
            count = len(row[0].split())
            picked = sorted({int(w) for w in chosen if 0 <= int(w) < count})
            if picked:
                conn.execute("INSERT INTO sentence_emphasis (sentence_id, words) VALUES (?, ?) ON CONFLICT(sentence_id)"
                             " DO UPDATE SET words = excluded.words", (sid, json.dumps(picked)))
            else:
                conn.execute("DELETE FROM sentence_emphasis WHERE sentence_id = ?", (sid,))
    return len(ids)


_WORD = re.compile(r"\w+", re.UNICODE)


def _bare(word: str) -> str:
    return "".join(_WORD.findall(word.lower()))


def spoken_indices(text: str, spoken: str, words: Sequence[int], *, rewritten: bool = True) -> tuple[int, ...]:
    """``words`` of ``text`` as indices of the words of ``spoken`` (its normalised form).

    The same word count: the same indices. Otherwise the words are aligned (ignoring
    case and punctuation); a word the normaliser rewrote ("1851") stresses all the words it
    became ("eighteen fifty-one") unless ``rewritten`` is False (then only words found again count)."""
    shown, said = text.split(), spoken.split()
    if not words:
        return ()
    if len(shown) == len(said):
        return tuple(sorted({w for w in words if 0 <= w < len(said)}))
    out: set[int] = set()
    matcher = difflib.SequenceMatcher(a=[_bare(w) for w in shown], b=[_bare(w) for w in said], autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        for w in words:
            if a0 <= w < a1 and (tag == "equal" or (rewritten and tag == "replace")):
                out.update([b0 + (w - a0)] if tag == "equal" else range(b0, b1))
    return tuple(sorted(out))


def follow_edit(conn: sqlite3.Connection, sentence_id: int, old: str, new: str) -> None:
    """Keep a sentence's stress on the same words when its text is edited (dropped where
    the stressed word was removed or rewritten), inside the edit's transaction."""
    row = conn.execute("SELECT words FROM sentence_emphasis WHERE sentence_id = ?", (sentence_id,)).fetchone()
    if row is None or old == new:
        return
    kept = spoken_indices(old, new, json.loads(row[0]), rewritten=False)
    if kept:
        conn.execute("UPDATE sentence_emphasis SET words = ? WHERE sentence_id = ?",
                     (json.dumps(list(kept)), sentence_id))
    else:
        conn.execute("DELETE FROM sentence_emphasis WHERE sentence_id = ?", (sentence_id,))


def stressed_words(text: str, words: Sequence[int]) -> list[str]:
    """The stressed words as the producer reads them (punctuation stripped), for the tree."""
    shown = text.split()
    return [shown[w].strip(".,;:!?\u201c\u201d\"'()\u2018\u2019") for w in words if 0 <= w < len(shown)]
