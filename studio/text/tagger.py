"""gruut's part-of-speech tagger and pronouncing dictionary, one reading of a sentence.

Why shared: the heteronym rules (:mod:`studio.text.normalize.heteronyms`) ask it
whether a noun/verb heteronym ("use", "record", "present") is the noun or the verb,
the book audit lists where it and the rules disagree, and proof-listening
(:mod:`studio.proof.pronounce`) takes its reading as the second opinion on what the
voice was given: one tagger, so the three cannot disagree about the same sentence.
gruut is optional (the ``proof`` extra); without it every answer is empty and the
rules decide alone. It costs about 30 ms a sentence, so callers ask only about
sentences holding a word that needs it.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import NamedTuple

log = logging.getLogger(__name__)


class Tagged(NamedTuple):
    word: str  # lower case
    pos: str  # Penn Treebank tag ("NN", "VBP"), "" when none
    phonemes: str  # gruut's IPA for the word in this sentence


@lru_cache(maxsize=4096)
def tagged(sentence: str) -> tuple[Tagged, ...]:
    """gruut's reading of each word of an English ``sentence``; empty when gruut is absent."""
    try:
        from gruut import sentences
    except ImportError:
        log.debug("gruut is not installed: no part-of-speech tagger")
        return ()
    out = []
    for sent in sentences(sentence, lang="en-us"):
        for w in sent:
            if w.phonemes:
                out.append(Tagged(w.text.lower(), w.pos or "", "".join(w.phonemes)))
    return tuple(out)


def part_of_speech(sentence: str, word: str, nth: int = 0) -> str:
    """"noun", "verb", "adjective" or "" for the ``nth`` ``word`` (lower case) of ``sentence``."""
    mine = [t.pos for t in tagged(sentence) if t.word == word]
    if nth >= len(mine):
        return ""
    pos = mine[nth]
    return "verb" if pos.startswith("VB") else "noun" if pos.startswith("NN") else "adjective" if pos.startswith("JJ") else ""
