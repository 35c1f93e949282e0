"""Book <-> database rows: the manuscript tables of ``project.sqlite``.

Split from the store so the (long, boring) mapping between the frozen
``Book`` dataclasses and rows lives in one place and the store can stay about
state and transactions.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict

from studio.core.types import Book, Chapter, Paragraph, Sentence


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace; what a spoken title or edited sentence keeps."""
    return " ".join(text.split())


#: A heading's number part: "Chapter 2", "2.", "II:", "Part 3 -" (the word, then the number).
_NUMBERED = re.compile(r"^(?:(?:chapter|part|book|section)\s+)?(\d+|[ivxlc]+)(?:\s*[.:)\-\u2013\u2014]\s*|\s+|$)")


def _heading_parts(text: str) -> tuple[str | None, str]:
    """``(number, words)`` of a heading: "Chapter 2. Building" -> ("2", "building")."""
    norm = normalize_space(text).casefold().rstrip(".:")
    found = _NUMBERED.match(norm)
    if found is None or (found.group(1).isalpha() and not found.group(0).startswith(("chapter", "part", "book",
                                                                                       "section"))
                         and found.end() < len(norm) and norm[found.end(1):found.end(1) + 1] not in ".:)-\u2013\u2014"):
        return None, norm  # "I walked..." or "Civic duty" is no numbered heading
    return found.group(1), norm[found.end():].strip()


def same_heading(text: str, title: str) -> bool:
    """Whether a paragraph is just the chapter heading again (importers keep it), with
    or without its number or a "Chapter N": "2. Building" and "Chapter 2. Building"
    are one heading, said once."""
    def norm(t: str) -> str:
        return normalize_space(t).casefold().rstrip(".:")

    if not norm(title):
        return False
    if norm(text) == norm(title):
        return True
    (n_text, w_text), (n_title, w_title) = _heading_parts(text), _heading_parts(title)
    if n_text and n_title and n_text != n_title:
        return False
    return w_text == w_title and (bool(w_text) or n_text == n_title)


def heading_paragraph(chapter: Chapter) -> bool:
    """True when the chapter's first paragraph is its heading: that paragraph is
    then spoken as the title, instead of saying the title twice."""
    return bool(chapter.paragraphs) and same_heading(chapter.paragraphs[0].text, chapter.title)


def insert_book(conn: sqlite3.Connection, book: Book) -> None:
    """Insert chapters, paragraphs and sentences (plus a title row where needed).

    ``ord`` numbers every spoken unit book-wide in reading order (title first in
    its chapter), which is the order a render follows. A chapter whose first
    paragraph repeats the heading gets no separate title row (see
    :func:`heading_paragraph`); otherwise the title row is spoken in the language
    of the chapter's first paragraph (a French chapter's title is French).
    """
    order = 0
    for ci, chapter in enumerate(book.chapters):
        cid = conn.execute(
            "INSERT INTO chapters (idx, title, front_matter, front_reason) VALUES (?, ?, ?, ?)",
            (ci, chapter.title, int(chapter.front_matter), chapter.front_reason or None),
        ).lastrowid
        title = normalize_space(chapter.title)
        if title and not heading_paragraph(chapter):
            lang = chapter.paragraphs[0].effective_language if chapter.paragraphs else book.language
            conn.execute(
                "INSERT INTO sentences (chapter_id, paragraph_id, idx, ord, text, original_text, language)"
                " VALUES (?, NULL, 0, ?, ?, ?, ?)",
                (cid, order, title, title, lang),
            )
            order += 1
        for pi, para in enumerate(chapter.paragraphs):
            pid = conn.execute(
                "INSERT INTO paragraphs (chapter_id, idx, text, language, confidence, language_override, kind)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (cid, pi, para.text, para.language, float(para.confidence), para.language_override, para.kind or None),
            ).lastrowid
            for si, sent in enumerate(para.sentences):
                conn.execute(
                    "INSERT INTO sentences (chapter_id, paragraph_id, idx, ord, text, original_text,"
                    " language, was_split, trailing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (cid, pid, si, order, sent.text, sent.text, sent.language, int(sent.was_split), sent.trailing),
                )
                order += 1


def write_book_row(conn: sqlite3.Connection, book: Book, source_hash: str) -> None:
    conn.execute(
        "INSERT INTO book (id, title, author, language, source, source_hash, metadata) VALUES (1, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET title=excluded.title, author=excluded.author,"
        " language=excluded.language, source=excluded.source, source_hash=excluded.source_hash,"
        " metadata=excluded.metadata, updated_at=datetime('now')",
        (book.title, book.author, book.language, book.source, source_hash,
         json.dumps(dict(book.metadata), ensure_ascii=False)),
    )


def load_book(conn: sqlite3.Connection) -> Book | None:
    """Rebuild the Book as the project now has it: edits and overrides applied.

    An edited sentence changes its paragraph's text (the contract that a
    paragraph's text is its sentences plus their trailing whitespace holds), and a
    language override gives the paragraph's sentences the override language.
    """
    head = conn.execute("SELECT title, author, language, source, metadata FROM book WHERE id = 1").fetchone()
    if head is None:
        return None
    sentences: dict[int, list[Sentence]] = defaultdict(list)
    for pid, text, lang, override, split, trailing in conn.execute(
        "SELECT s.paragraph_id, s.text, s.language, p.language_override, s.was_split, s.trailing"
        " FROM sentences s JOIN paragraphs p ON p.id = s.paragraph_id ORDER BY s.paragraph_id, s.idx"
    ):
        sentences[pid].append(Sentence(text=text, language=override or lang, was_split=bool(split), trailing=trailing))
    paragraphs: dict[int, list[Paragraph]] = defaultdict(list)
    for pid, cid, text, lang, conf, override, kind in conn.execute(
        "SELECT id, chapter_id, text, language, confidence, language_override, kind FROM paragraphs"
        " ORDER BY chapter_id, idx"
    ):
        sents = tuple(sentences.get(pid, ()))
        if sents:
            text = "".join(s.text + s.trailing for s in sents)
        paragraphs[cid].append(
            Paragraph(text=text, sentences=sents, language=lang, confidence=conf, language_override=override,
                      kind=kind or "")
        )
    chapters = tuple(
        Chapter(title=title, paragraphs=tuple(paragraphs.get(cid, ())), front_matter=bool(front), front_reason=why or "")
        for cid, title, front, why in conn.execute("SELECT id, title, front_matter, front_reason FROM chapters ORDER BY idx")
    )
    title, author, language, source, metadata = head
    try:
        meta = {str(k): str(v) for k, v in json.loads(metadata).items()}
    except (ValueError, AttributeError):
        meta = {}
    return Book(title=title, author=author, language=language, chapters=chapters, source=source, metadata=meta)


def carry_over_user_changes(conn: sqlite3.Connection, overrides: dict[str, str], edits: dict[tuple[str, str], str]) -> int:
    """After a re-import, re-apply overrides (by paragraph text) and edits (by the
    paragraph text + original sentence text). Returns how many were re-applied."""
    applied = 0
    for text, lang in overrides.items():
        applied += conn.execute(
            "UPDATE paragraphs SET language_override = ? WHERE text = ?", (lang, text)
        ).rowcount
    for (ptext, original), new in edits.items():
        applied += conn.execute(
            "UPDATE sentences SET text = ? WHERE original_text = ? AND paragraph_id IN"
            " (SELECT id FROM paragraphs WHERE text = ?)",
            (new, original, ptext),
        ).rowcount
    return applied


def user_changes(conn: sqlite3.Connection) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """The overrides and edits a re-import should keep (see ``carry_over_user_changes``)."""
    overrides = dict(
        conn.execute("SELECT text, language_override FROM paragraphs WHERE language_override IS NOT NULL")
    )
    edits = {
        (ptext, original): text
        for ptext, original, text in conn.execute(
            "SELECT p.text, s.original_text, s.text FROM sentences s JOIN paragraphs p ON p.id = s.paragraph_id"
            " WHERE s.text <> s.original_text"
        )
    }
    return overrides, edits
