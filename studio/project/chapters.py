"""The producer's control over chapters: which ones the book includes, and their names.

Why stored beside the imported chapter and not over it: the import decides what
looks like front matter and what a chapter is called, and re-importing a
manuscript must not lose the producer's decisions; the chapter's imported
title also stays what export compares the first paragraph with (a heading said
once, as the title). ``included`` NULL keeps the import's choice (front matter
left out), ``name`` NULL keeps the imported title. Merging and splitting change
the chapter rows themselves (:mod:`studio.project.restructure`), and re-importing
replays all of these choices where the new text still has them.
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.core.errors import ProjectError
from studio.project.db import ProjectDb
from studio.project.front_matter import included_by_default, read_front_matter
from studio.project.restructure import merge_with_next, split_at

@dataclass(frozen=True)
class ChapterControl:
    """What the producer decided for one chapter (effective values)."""

    index: int
    title: str
    name: str
    included: bool
    front_matter: bool
    reason: str = ""  # why the import called it front matter ("table of contents"), if it said


class ProjectChapters:
    """Include/exclude, rename, merge and split chapters of one open project (``project.chapter_control``).

    ``all()`` is the one reading of the effective chapters: merges and splits are
    written into the chapter rows (:mod:`studio.project.restructure`), so every
    reader of chapters sees them.
    """

    def __init__(self, db: ProjectDb) -> None:
        self.db = db

    def all(self) -> list[ChapterControl]:
        rows = self.db.read().execute(
            "SELECT idx, title, name, included, front_matter, front_reason FROM chapters ORDER BY idx").fetchall()
        read = read_front_matter(self.db)  # the book-level choice: read epigraphs, extracts...
        return [ChapterControl(int(i), str(t), str(n or t), bool(inc) if inc is not None else
                               included_by_default(bool(front), str(t), str(why or ""), read), bool(front),
                               str(why or "")) for i, t, n, inc, front, why in rows]

    def included(self) -> list[int]:
        """Chapters a book render and a default export cover (all, if the producer excluded everything)."""
        chapters = self.all()
        return [c.index for c in chapters if c.included] or [c.index for c in chapters]

    def set_included(self, index: int, included: bool | None) -> None:
        """Include or exclude a chapter (None: back to the import's choice)."""
        self._update("included", None if included is None else int(included), index)

    def rename(self, index: int, name: str | None) -> None:
        """Give a chapter another name (files and tags follow); None or blank: the imported title."""
        clean = " ".join((name or "").split()) or None
        self._update("name", clean, index)

    def merge_with_next(self, index: int) -> None:
        """Chapter ``index + 1`` joins chapter ``index``; sentences and their audio stay as they are."""
        with self.db.write() as conn:
            merge_with_next(conn, index)

    def split(self, index: int, paragraph: int) -> None:
        """Chapter ``index`` ends before its paragraph ``paragraph``; the rest becomes the next chapter."""
        with self.db.write() as conn:
            split_at(conn, index, paragraph)

    def _update(self, column: str, value: object, index: int) -> None:
        with self.db.write() as conn:
            cur = conn.execute(f"UPDATE chapters SET {column} = ? WHERE idx = ?", (value, index))
            if cur.rowcount != 1:
                raise ProjectError(f"there is no chapter {index + 1}")
