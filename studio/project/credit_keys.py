"""Audio the export speaks beyond the book's own sentences: the credits.

Why beside the store and not in it: the credits are not part of the manuscript
(re-importing must not touch them, the tree does not show them), yet they are
spoken with the project's voice, lexicon and engine settings and kept in the
project's audio cache under the same kind of key as every sentence, so a second
export reuses them and a changed voice or lexicon renders them again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from studio.core.lexicon import Lexicon
from studio.project.cache import CacheEntry, VoiceIdentity, cache_key, upsert_entry
from studio.project.unvoiced import speaker

if TYPE_CHECKING:
    from studio.project.db import ProjectDb
    from studio.project.store import Project


def book_language(db: ProjectDb) -> str:
    """The book's main language (without building the whole book)."""
    return str(db.read().execute("SELECT language FROM book WHERE id = 1").fetchone()[0])


def text_keys(project: Project, texts: list[str], language: str) -> list[tuple[str, Lexicon, str]]:
    """Per text: the cache key it gets in ``language`` with the project's default voice,
    the lexicon entries it uses and the language the voice is handed (as a sentence's)."""
    settings = project.settings()
    voice = VoiceIdentity(settings.voice_id, project.voice_fingerprints().get(settings.voice_id, ""))
    lexicon = project.lexicon.effective()
    said = speaker(settings, book_language(project.db))(language)
    out = []
    for text in texts:
        used = lexicon.applicable(text, language)
        key = cache_key(text=text, language=said, voice=voice, engine=settings.engine_token,
                        settings_token=settings.synthesis.cache_token(), lexicon=used.digest())
        out.append((key, used, said))
    return out


def record_entry(db: ProjectDb, entry: CacheEntry) -> None:
    """Record audio written to the cache for an extra (verified on every read, like a sentence's)."""
    with db.write() as conn:
        upsert_entry(conn, entry)


__all__ = ["book_language", "record_entry", "text_keys"]
