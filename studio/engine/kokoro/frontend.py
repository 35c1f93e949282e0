"""Kokoro's front end: the studio's espeak-ng phonemes mapped to Kokoro's 114 symbols.

Why the studio's front end and not Kokoro's own G2P (misaki): every voice must say a
word the same way, so the lexicon (respellings and IPA entries), heteronyms, spoken
forms and the language of each passage apply here exactly as for a Piper voice
(:class:`~studio.engine.voice.phonemize.PiperFrontEnd` does the work, with Kokoro's
vocabulary as its symbol table). Symbols Kokoro has no token for are dropped, as
kokoro-onnx does with the same espeak-ng output.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from studio.core.language import language_family
from studio.core.lexicon import Lexicon
from studio.engine.voice.config import VoiceConfig
from studio.engine.voice.phonemize import ESPEAK_VOICES, PiperFrontEnd
from studio.text.segment import is_speakable

#: tokens per model call: the style table has 510 rows and the model adds a pad each side
MAX_TOKENS = 510
SAMPLE_RATE = 24000
#: Kokoro's clause and sentence marks: where a long sentence is cut first
CLAUSE_MARKS = frozenset(",;:.!?—…")


@lru_cache(maxsize=1)
def vocabulary() -> dict[str, int]:
    """Kokoro v1.0's symbol -> token table (Apache-2.0, from the model's config)."""
    data = json.loads((Path(__file__).with_name("vocab.json")).read_text(encoding="utf-8"))
    return {str(k): int(v) for k, v in data["vocab"].items()}


class KokoroFrontEnd:
    """Text + language -> Kokoro tokens for a pack that speaks ``language`` (``en_US``, ``ja``)."""

    def __init__(self, language: str) -> None:
        family = language_family(language) or "en"
        tag = language.replace("_", "-").lower()
        espeak = ESPEAK_VOICES.get(tag) or ESPEAK_VOICES.get(family, "en-us")
        self.vocab = vocabulary()
        self.config = VoiceConfig(sample_rate=SAMPLE_RATE, espeak_voice=espeak, phoneme_type="espeak",
                                  phoneme_id_map={s: (i,) for s, i in self.vocab.items()},
                                  num_symbols=max(self.vocab.values()) + 1, language=language or "en_US",
                                  noise_scale=0.0, noise_w=0.0)
        self.piper = PiperFrontEnd(self.config)

    def phonemes(self, text: str, language: str, lexicon: Lexicon | None = None) -> str:
        """The sentence's phonemes in Kokoro's symbols, words separated by one space ("" for a
        text of only symbols, which the render loop leaves silent: espeak-ng would name them)."""
        if not is_speakable(text):
            return ""
        symbols = self.piper.phonemize(text, language, lexicon)
        known = "".join(s for s in symbols if s in self.vocab)
        return " ".join(known.split())

    def unknown_phonemes(self, ipa: str) -> list[str]:
        """Symbols of an entry's IPA Kokoro has no token for (they would be dropped)."""
        return self.piper.unknown_phonemes(ipa)

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return [self.vocab[s] for s in self.phonemes(text, language, lexicon)]


def split_tokens(ids: list[int], limit: int = MAX_TOKENS) -> list[list[int]]:
    """Cut a sentence longer than ``limit`` tokens into pieces of at most ``limit``: after the
    last clause mark that fits, else at the last word boundary, else hard (a wall of symbols)."""
    vocab = vocabulary()
    marks = {vocab[m] for m in CLAUSE_MARKS if m in vocab}
    space = vocab[" "]
    pieces, rest = [], list(ids)
    while len(rest) > limit:
        head = rest[:limit]
        cut = next((i + 1 for i in range(limit - 1, limit // 3, -1) if head[i] in marks), 0)
        cut = cut or next((i for i in range(limit - 1, limit // 3, -1) if head[i] == space), 0) or limit
        pieces.append([t for t in rest[:cut]])
        rest = rest[cut:]
        while rest and rest[0] == space:
            rest = rest[1:]
    if rest:
        pieces.append(rest)
    return [p for p in pieces if p]
