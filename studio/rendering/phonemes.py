"""The phonemes a voice is given for a sentence, for the listings that show them.

Why here: ``studio inspect --spoken --json``, the book audit and the desktop's audit
panel show what the voice is given, and must show what the render gives it: the voice's
own front end (its family's, built once per voice) with the same spoken form, language
and lexicon entries. The desktop reaches voices only through this layer.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from studio.core.lexicon import Lexicon

#: (spoken text, language the voice reads it in, lexicon entries) -> phonemes ("" when not phoneme-based)
Phonemes = Callable[[str, str, "Lexicon | None"], str]


@lru_cache(maxsize=8)
def voice_phonemes(voice_id: str | None) -> Phonemes:
    """The phonemizer of the voice ``voice_id`` (None: the bundled one), as the render drives it."""
    from studio.engine.families import family_of
    from studio.engine.voice.catalog import get_voice

    info = get_voice(voice_id)
    front_end = family_of(info).front_end(info) if info.abilities.phoneme_input else None
    if front_end is None:
        return lambda text, language, lexicon=None: ""
    return lambda text, language, lexicon=None: front_end.phonemes(text, language, lexicon or None)
