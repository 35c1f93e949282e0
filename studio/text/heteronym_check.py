"""Heteronym readings that are not certain: the rules and the tagger disagree.

Why: the heteronym rules (:mod:`studio.text.normalize.heteronyms`) decide a noun/verb
word ("use", "record", "present") from its neighbours, and gruut's tagger
(:mod:`studio.text.tagger`) from the whole sentence; where they disagree a listener
should check the reading (the book audit lists them). Only the words whose two
readings are the noun and the verb are asked about.
"""

from __future__ import annotations

from studio.text import tagger
from studio.text.normalize import heteronyms


def uncertain_heteronyms(text: str) -> list[str]:
    """Noun/verb heteronyms of an English sentence whose reading the rules and the tagger disagree on."""
    found = list(heteronyms.WORDS.finditer(text))
    if not found:
        return []
    out: list[str] = []
    seen: dict[str, int] = {}
    for m in found:
        word = m.group(0).lower()
        nth = seen.get(word, 0)
        seen[word] = nth + 1
        kind = heteronyms.noun_or_verb(word)
        if not kind:
            continue
        pos = tagger.part_of_speech(text, word, nth)
        if pos not in ("noun", "verb"):
            continue
        respelled = heteronyms.respell(m) != m.group(0)
        said_as = ("verb" if respelled else "noun") if kind == "verb" else ("noun" if respelled else "verb")
        if said_as != pos:
            out.append(f"{m.group(0)} (said as the {said_as}, tagged {pos})")
    return out


