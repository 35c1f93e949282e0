"""Kinds of front matter, and the book-level choice to read the ones worth hearing.

Why kinds: the import marks everything before the story as front matter and
leaves it out. That is right for a table of contents, a copyright page or a
title page (nobody wants them read), but many productions read a book's
epigraph, its extracts, its etymology, a dedication or a preface. One choice per
book ("read the epigraphs, extracts, etymology...") includes every front-matter
chapter of a readable kind; contents, copyright and title pages stay out.

The choice only changes the *default* of a chapter: one the producer included
or excluded by hand keeps that decision. It is stored in the project's
``settings`` table under its own key (an older studio ignores it), and
:meth:`studio.project.chapters.ProjectChapters.all` applies it, so the tree,
Render Book, export and ``studio inspect`` all follow.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from studio.project.db import ProjectDb

FrontKind = Literal["contents", "copyright", "title", "readable"]
READ_FRONT_KEY = "read_front_matter"
#: kinds never read by default, whatever the book-level choice
NEVER_READ = ("contents", "copyright", "title")

_CONTENTS = re.compile(r"^(?:the\s+)?(?:(?:table\s+of\s+)?contents|toc|sommaire|table\s+des\s+mati[eè]res|"
                       r"inhalt(?:sverzeichnis)?|[íi]ndice)\b", re.IGNORECASE)
_COPYRIGHT = re.compile(r"^(?:copyright|imprint|colophon|mentions\s+l[ée]gales|impressum|legal)\b", re.IGNORECASE)
_TITLE = re.compile(r"^(?:the\s+)?(?:front\s+)?(?:cover|couverture|title(?:\s*page)?|half[\s-]*title|"
                    r"page\s+de\s+titre|(?:other\s+)?books\s+by|also\s+by)\b", re.IGNORECASE)


def front_kind(title: str, reason: str = "") -> FrontKind:
    """What kind of front matter a chapter is, from the import's reason and its title."""
    text = " ".join(title.split()).strip(" .:")
    why = reason.lower()
    if "contents" in why or _CONTENTS.match(text):
        return "contents"
    if "copyright" in why or _COPYRIGHT.match(text):
        return "copyright"
    if _TITLE.match(text):
        return "title"
    return "readable"


def read_front_matter(db: ProjectDb) -> bool:
    """The book-level choice (off unless the producer turned it on)."""
    row = db.read().execute("SELECT value FROM settings WHERE key = ?", (READ_FRONT_KEY,)).fetchone()
    try:
        return bool(json.loads(row[0])) if row else False
    except ValueError:
        return False


def set_read_front_matter(db: ProjectDb, on: bool) -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (READ_FRONT_KEY, json.dumps(bool(on))),
        )


def included_by_default(front: bool, title: str, reason: str, read_front: bool) -> bool:
    """A chapter nobody included or excluded by hand: the body always, front matter when
    the book reads it and it is of a readable kind."""
    return not front or (read_front and front_kind(title, reason) not in NEVER_READ)
