"""Merging and splitting chapters: the producer's structure, written into the chapter rows.

Why rewrite the rows instead of keeping an overlay over the import (as include
and rename do): every reader -- render, export, publish, the tree, the waveform,
the command line -- finds chapters through the ``chapters`` table and a
sentence's ``chapter_id``; an overlay would have to be translated in each of
them, and one missed reader would number or cut the book differently. Sentences
keep their ids, ``ord``, text and language, and a cache key knows nothing of
chapters, so a producer who merges two rendered chapters re-renders nothing.

Why it stays undoable: a merge records the chapter it absorbed in
``chapter_joins``, keyed by the paragraph where that chapter began (a separately
spoken title becomes that paragraph, the same sentence row); a split at that
paragraph restores the chapter row exactly. A split anywhere else makes a new
chapter with ``origin = 'split'``.

Re-import (:meth:`Project.replace_book`) rebuilds every row from the manuscript.
:func:`decisions` reads the producer's choices before, :func:`replay` applies
them after: includes and names by the imported title, merges by the absorbed
chapter's imported title, splits by the text of the paragraph they start at.
A choice whose anchor is gone from the new manuscript is dropped with a warning
in the log (never applied somewhere else).
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass

from studio.core.errors import ProjectError
from studio.text.structure import MAX_HEADING_CHARS, is_chapter_heading

log = logging.getLogger(__name__)

SPLIT = "split"
_SENTENCE_END = tuple(".!?\u2026,;:")
_HEADING_WORDS = 12


_ROW = "SELECT id, title, front_matter, included, name, origin, front_reason FROM chapters WHERE idx = ?"


def _chapter(conn: sqlite3.Connection, index: int) -> tuple:
    row = conn.execute(_ROW, (index,)).fetchone()
    if row is None:
        raise ProjectError(f"there is no chapter {index + 1}")
    return row


def _shift(conn: sqlite3.Connection, after: int, by: int) -> None:
    """Move chapters past ``after`` by ``by`` positions (through negatives: ``idx`` is UNIQUE)."""
    conn.execute("UPDATE chapters SET idx = -idx - 1 WHERE idx > ?", (after,))
    conn.execute("UPDATE chapters SET idx = -idx - 1 + ? WHERE idx < 0", (by,))


def merge_with_next(conn: sqlite3.Connection, index: int) -> None:
    """Chapter ``index + 1`` becomes the tail of chapter ``index`` (which keeps its name).

    The merged chapter is included when either was: merging an excluded prologue
    into chapter one must not silently drop chapter one from the book.
    """
    a = _chapter(conn, index)
    b = conn.execute(_ROW, (index + 1,)).fetchone()
    if b is None:
        raise ProjectError(f"chapter {index + 1} is the last chapter; there is no next one to merge with")
    n = conn.execute("SELECT COALESCE(MAX(idx) + 1, 0) FROM paragraphs WHERE chapter_id = ?", (a[0],)).fetchone()[0]
    title = conn.execute(
        "SELECT id, original_text, language FROM sentences WHERE chapter_id = ? AND paragraph_id IS NULL", (b[0],)
    ).fetchone()
    conn.execute("UPDATE paragraphs SET chapter_id = ?, idx = idx + ? WHERE chapter_id = ?",
                 (a[0], n + (title is not None), b[0]))
    conn.execute("UPDATE sentences SET chapter_id = ? WHERE chapter_id = ?", (a[0], b[0]))
    if title is not None:  # the spoken title stays, as the paragraph the absorbed chapter starts with
        start = conn.execute(
            "INSERT INTO paragraphs (chapter_id, idx, text, language, confidence) VALUES (?, ?, ?, ?, 1.0)",
            (a[0], n, title[1], title[2]),
        ).lastrowid
        conn.execute("UPDATE sentences SET paragraph_id = ?, idx = 0 WHERE id = ?", (start, title[0]))
    else:
        found = conn.execute("SELECT id FROM paragraphs WHERE chapter_id = ? AND idx = ?", (a[0], n)).fetchone()
        start = found[0] if found else None
    if start is not None:  # an empty chapter leaves nothing to split at again
        conn.execute(
            "INSERT INTO chapter_joins (paragraph_id, title, front_matter, included, name, origin, front_reason,"
            " title_sentence, kept_included) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (start, *b[1:], int(title is not None), a[3]),
        )
    if not _included(a) and _included(b):
        conn.execute("UPDATE chapters SET included = 1 WHERE id = ?", (a[0],))
    conn.execute("DELETE FROM chapters WHERE id = ?", (b[0],))
    _shift(conn, index + 1, -1)


def split_at(conn: sqlite3.Connection, index: int, paragraph: int) -> None:
    """Paragraphs ``paragraph``.. of chapter ``index`` become chapter ``index + 1``.

    At a paragraph where a merge joined two chapters, the absorbed chapter comes
    back as it was (title, name, included, spoken title). Elsewhere the new chapter
    is named after the paragraph when it is a heading, else "<name> (part 2)", and
    is included or excluded like the chapter it came from.
    """
    a = _chapter(conn, index)
    para = conn.execute("SELECT id, text FROM paragraphs WHERE chapter_id = ? AND idx = ?",
                        (a[0], paragraph)).fetchone()
    if para is None:
        raise ProjectError(f"chapter {index + 1} has no paragraph {paragraph + 1}")
    if paragraph == 0:
        raise ProjectError("a chapter cannot be split before its first paragraph")
    join = conn.execute(
        "SELECT title, front_matter, included, name, origin, front_reason, title_sentence, kept_included"
        " FROM chapter_joins WHERE paragraph_id = ?", (para[0],)
    ).fetchone()
    _shift(conn, index, 1)
    if join is not None:
        values, title_sentence = join[:6], bool(join[6])
        conn.execute("UPDATE chapters SET included = ? WHERE id = ?", (join[7], a[0]))
        conn.execute("DELETE FROM chapter_joins WHERE paragraph_id = ?", (para[0],))
    else:
        heading = " ".join(para[1].split())
        title = heading if is_heading(heading) else f"{a[4] or a[1]} (part 2)"
        values, title_sentence = (title, a[2], a[3], None, SPLIT, a[6]), False
    cid = conn.execute(
        "INSERT INTO chapters (idx, title, front_matter, included, name, origin, front_reason)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)", (index + 1, *values),
    ).lastrowid
    start = paragraph
    if title_sentence:  # the paragraph was the absorbed chapter's spoken title: a title again
        conn.execute("UPDATE sentences SET paragraph_id = NULL, chapter_id = ? WHERE paragraph_id = ?",
                     (cid, para[0]))
        conn.execute("DELETE FROM paragraphs WHERE id = ?", (para[0],))
        start += 1
    conn.execute(
        "UPDATE sentences SET chapter_id = ? WHERE paragraph_id IN"
        " (SELECT id FROM paragraphs WHERE chapter_id = ? AND idx >= ?)", (cid, a[0], start),
    )
    conn.execute("UPDATE paragraphs SET chapter_id = ?, idx = idx - ? WHERE chapter_id = ? AND idx >= ?",
                 (cid, start, a[0], start))


def is_heading(text: str) -> bool:
    """Whether a paragraph reads as a heading (short, not a sentence) to name a chapter after."""
    if not text or len(text) > MAX_HEADING_CHARS:
        return False
    return is_chapter_heading(text) or (len(text.split()) <= _HEADING_WORDS and not text.endswith(_SENTENCE_END))


def _included(row: tuple) -> bool:
    """Effective inclusion of a chapter row: the producer's choice, else not front matter."""
    return bool(row[3]) if row[3] is not None else not row[2]


@dataclass(frozen=True)
class Decisions:
    """The producer's chapter choices, anchored in text so a re-import can find them again."""

    controls: tuple[tuple[str, int | None, str | None], ...]  # imported title, included, name
    merges: tuple[str, ...]  # imported titles of absorbed chapters, in reading order
    splits: tuple[tuple[str, str, int | None, str | None], ...]  # first paragraph, title, included, name


def decisions(conn: sqlite3.Connection) -> Decisions:
    controls = tuple(conn.execute(  # absorbed chapters too: a split there later gives them back
        "SELECT title, included, name FROM chapters WHERE origin IS NULL AND (included IS NOT NULL"
        " OR name IS NOT NULL) UNION ALL SELECT title, included, name FROM chapter_joins WHERE origin IS NULL"
        " AND (included IS NOT NULL OR name IS NOT NULL)"))
    merges = tuple(t for (t,) in conn.execute(
        "SELECT j.title FROM chapter_joins j JOIN paragraphs p ON p.id = j.paragraph_id"
        " JOIN chapters c ON c.id = p.chapter_id WHERE j.origin IS NULL ORDER BY c.idx, p.idx"))
    splits = tuple(conn.execute(
        "SELECT p.text, c.title, c.included, c.name FROM chapters c JOIN paragraphs p ON p.chapter_id = c.id"
        " AND p.idx = 0 WHERE c.origin = ? ORDER BY c.idx", (SPLIT,)))
    return Decisions(controls, merges, splits)


def replay(conn: sqlite3.Connection, made: Decisions) -> int:
    """Apply ``made`` to freshly imported rows; returns how many choices found their place."""
    applied, lost = 0, []
    for title, included, name in made.controls:
        if conn.execute("UPDATE chapters SET included = ?, name = ? WHERE title = ?",
                        (included, name, title)).rowcount:
            applied += 1
        else:
            lost.append(f"choice for '{title}'")
    for title in made.merges:
        row = conn.execute("SELECT MIN(idx) FROM chapters WHERE title = ? AND idx > 0 AND origin IS NULL",
                           (title,)).fetchone()
        if row[0] is None:
            lost.append(f"merge of '{title}'")
            continue
        merge_with_next(conn, row[0] - 1)
        applied += 1
    for text, title, included, name in made.splits:
        row = conn.execute("SELECT c.idx, p.idx FROM paragraphs p JOIN chapters c ON c.id = p.chapter_id"
                           " WHERE p.text = ? AND p.idx > 0 ORDER BY c.idx, p.idx LIMIT 1", (text,)).fetchone()
        if row is None:
            lost.append(f"split at '{text[:40]}'")
            continue
        split_at(conn, row[0], row[1])
        conn.execute("UPDATE chapters SET title = ?, included = ?, name = ? WHERE idx = ?",
                     (title, included, name, row[0] + 1))
        applied += 1
    if lost:
        log.warning("re-import: %d chapter choice(s) no longer match the manuscript and were dropped: %s",
                    len(lost), "; ".join(lost))
    return applied
