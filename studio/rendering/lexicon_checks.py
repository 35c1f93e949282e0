"""Checks on lexicon entries that need the project's voices (for the command line and the app).

Why here: an IPA entry is only as good as the voice that speaks it -- a symbol the
voice's phoneme map lacks is dropped silently at synthesis -- and the desktop app
reaches voices only through this layer.
"""

from __future__ import annotations

from studio.core.lexicon import LexiconEntry
from studio.project.store import Project


def unknown_ipa(project: Project | None, entry: LexiconEntry) -> tuple[str, list[str]]:
    """``(voice id, symbols of the entry's IPA that voice cannot say)``.

    The voice is the one that speaks the entry's language in ``project`` (the book's
    language for an entry without one; the bundled voice without a project). Empty
    for respellings and for voices that do not take phonemes.
    """
    from studio.engine.families import family_of
    from studio.engine.voice.catalog import get_voice

    voice_id = project.voice_for(entry.language or project.book().language) if project is not None else None
    info = get_voice(voice_id)
    if entry.kind != "phoneme" or not info.abilities.phoneme_input:
        return info.id, []
    front_end = family_of(info).front_end(info)
    if front_end is None:
        return info.id, []
    return info.id, front_end.unknown_phonemes(entry.value)
