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
from studio.project.cache import CacheEntry, VoiceIdentity, cache_key
from studio.project.unvoiced import speaker

if TYPE_CHECKING:
    from studio.project.store import Project


def text_key(project: Project, text: str, language: str) -> tuple[str, Lexicon, str]:
    """The cache key ``text`` in ``language`` gets with the project's default voice,
    the lexicon entries it uses and the language the voice is handed (as a sentence's)."""
    settings = project.settings()
    voice_id = settings.voice_id
    used = project.lexicon.effective().applicable(text, language)
    said = speaker(settings, project.book().language)(language)
    key = cache_key(text=text, language=said, voice=VoiceIdentity(voice_id, project.voice_fingerprints().get(voice_id, "")),
                    engine=settings.engine_token, settings_token=settings.synthesis.cache_token(), lexicon=used.digest())
    return key, used, said


def record_entry(project: Project, entry: CacheEntry) -> None:
    """Record audio written to the cache for an extra (verified on every read, like a sentence's)."""
    with project._write() as conn:
        conn.execute(
            "INSERT INTO cache_entries (key, checksum, size, sample_rate, duration) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET checksum = excluded.checksum, size = excluded.size,"
            " sample_rate = excluded.sample_rate, duration = excluded.duration",
            (entry.key, entry.checksum, entry.size, entry.sample_rate, entry.duration),
        )


__all__ = ["record_entry", "text_key"]
