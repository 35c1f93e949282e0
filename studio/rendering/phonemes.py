"""The phonemes a voice is given for a sentence, for the listings that show them.

Why here: ``studio inspect --spoken --json``, the book audit and the desktop's audit
panel show what the voice is given, and must show what the render gives it: the same
front end (:class:`studio.engine.voice.phonemize.PiperFrontEnd`, built once per voice
from its config) with the same spoken form, language and lexicon entries. The desktop
reaches voices only through this layer.
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
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.config import VoiceConfig
    from studio.engine.voice.phonemize import PiperFrontEnd

    info = get_voice(voice_id)
    if info.backend != "piper":
        return lambda text, language, lexicon=None: ""
    front_end = PiperFrontEnd(VoiceConfig.from_file(info.config_path))

    def phonemes(text: str, language: str, lexicon: Lexicon | None = None) -> str:
        return "".join(front_end.phonemize(text, language, lexicon or None)) if text.strip() else ""

    return phonemes
