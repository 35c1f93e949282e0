"""How a project speaks a passage in a language that none of its voices speaks.

Why here: the producer's choice (:class:`~studio.core.types.UnvoicedPolicy`) changes
what is synthesized, so it must reach the cache key of exactly the passages it
touches -- which is decided where the project works out renditions
(:mod:`studio.project.rendition`). Passages in a voiced language are never
affected, so changing the policy re-renders only the others.
"""

from __future__ import annotations

from collections.abc import Iterable

from studio.core.errors import StudioError
from studio.core.language import language_family
from studio.core.types import UnvoicedPolicy

#: marks a skipped passage's language in its cache key (its audio is silence)
SKIPPED = "skip/"


def voice_language(voice_id: str, prefer: str = "") -> str | None:
    """The language family the voice speaks: ``prefer`` (the book's) when the voice speaks it
    among its languages (a multilingual voice, e.g. a Kokoro pack, reads the book in its
    language), else its own; None when it is not installed here."""
    from studio.engine.voice.catalog import get_voice

    try:
        voice = get_voice(voice_id)
    except StudioError:
        return None
    family = language_family(prefer)
    return family if family and family in voice.abilities.languages else voice.language_family


def said(policy: str, language_voices: Iterable[str], book_language: str, voiced_by_default: str | None,
         language: str) -> str:
    """The language handed to the voice's front end for a passage in ``language``, or ``skip/<lang>``.

    ``policy`` is the project's :class:`~studio.core.types.UnvoicedPolicy` value. A
    language is voiced when the project maps it to a voice (``language_voices``) or the default voice
    (which speaks ``voiced_by_default``) speaks it; a default voice not installed
    here (None) counts as voicing every language, so a project opened on another
    machine keeps its keys.
    """
    if voiced_by_default is None:
        return language
    chosen = UnvoicedPolicy(policy)
    voiced = {language_family(k) for k in language_voices} | {voiced_by_default}
    if chosen is UnvoicedPolicy.NATIVE_PHONEMES or language_family(language) in voiced:
        return language
    return book_language if chosen is UnvoicedPolicy.BOOK_LANGUAGE else SKIPPED + language
