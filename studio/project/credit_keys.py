"""Audio the export speaks beyond the book's own sentences: the credits.

Why beside the store and not in it: the credits are not part of the manuscript
(re-importing must not touch them, the tree does not show them), yet they are
spoken with the project's voice, lexicon and engine settings and kept in the
project's audio cache under the same kind of key as every sentence -- made by the
same function (:func:`studio.project.rendition.render_as`), spoken form included --
so a second export reuses them and a changed voice or lexicon renders them again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from studio.project.cache import CacheEntry, upsert_entry
from studio.project.rendition import Rendition, SentenceInputs, render_as

if TYPE_CHECKING:
    from studio.project.db import ProjectDb
    from studio.project.store import Project


def text_renditions(project: Project, texts: list[str], language: str) -> list[Rendition]:
    """Per text: what it is rendered as in ``language`` with the project's default voice
    (its spoken form, lexicon entries, the language its voice is handed, its cache key)."""
    version = project.version()
    return [render_as(version, SentenceInputs(text, language), voice_id=version.voice_id) for text in texts]


def record_entry(db: ProjectDb, entry: CacheEntry) -> None:
    """Record audio written to the cache for an extra (verified on every read, like a sentence's)."""
    with db.write() as conn:
        upsert_entry(conn, entry)


__all__ = ["record_entry", "text_renditions"]
