"""How a project speaks a passage in a language that none of its voices speaks.

Why here: the producer's choice (:class:`~studio.core.types.UnvoicedPolicy`) changes
what is synthesized, so it must reach the cache key of exactly the passages it
touches -- which is decided where the project computes keys. Passages in a voiced
language are never affected, so changing the policy re-renders only the others.
"""

from __future__ import annotations

from typing import Callable

from studio.core.errors import StudioError
from studio.core.language import language_family
from studio.core.types import UnvoicedPolicy
from studio.project.settings import ProjectSettings

#: marks a skipped passage's language in its cache key (its audio is silence)
SKIPPED = "skip/"


def speaker(settings: ProjectSettings, book_language: str) -> Callable[[str], str]:
    """language -> the language handed to the voice's front end, or ``skip/<lang>``.

    A language is voiced when the project maps it to a voice or the default voice
    speaks it (a voice not installed here counts as voicing every language, so a
    project opened on another machine keeps its keys).
    """
    from studio.engine.voice.catalog import get_voice

    try:
        own = get_voice(settings.voice_id).language_family
    except StudioError:
        return lambda language: language
    voiced = {language_family(k) for k in settings.language_voices} | {own}
    policy = UnvoicedPolicy(settings.unvoiced)

    def speak(language: str) -> str:
        if policy is UnvoicedPolicy.NATIVE_PHONEMES or language_family(language) in voiced:
            return language
        return book_language if policy is UnvoicedPolicy.BOOK_LANGUAGE else SKIPPED + language

    return speak
