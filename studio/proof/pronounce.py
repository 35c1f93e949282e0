"""The phonemes, checked without a recogniser: a heteronym read against its context.

Why without listening: a recogniser hears "wound" whether the voice said /wuːnd/ or
/waʊnd/, so a heteronym read the wrong way passes any listening check. What the
voice was given is known (the sentence's spoken form, respellings included), so it
is compared with a second opinion on the context: the studio's own heteronym rules
(:mod:`studio.text.normalize.heteronyms`) and gruut's part-of-speech tagger with
its pronouncing dictionary, an independent reading of the same sentence. A
disagreement is a flag of its own kind, "check the pronunciation": the voice said
what it was given, so no new take fixes it; a lexicon entry or an edited spoken
form does.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from studio.core.language import language_family
from studio.core.lexicon import Lexicon
from studio.project.proofs import ProofFlag
from studio.proof.words import edit_distance, phonemes

log = logging.getLogger(__name__)

#: the other opinion must be this much closer (phonemes) to one reading to count
MARGIN = 1


def _readings() -> dict[str, str]:
    from studio.text.normalize import heteronyms

    return {word: alt for word, (alt, _test) in heteronyms.HETERONYMS.items() if word != "august"}


@lru_cache(maxsize=2048)
def _tagged(sentence: str) -> tuple[tuple[str, str], ...]:
    """gruut's reading of each word of the sentence (word, phonemes); empty when gruut is absent."""
    try:
        from gruut import sentences
    except ImportError:
        log.debug("gruut is not installed: the heteronym check has only the studio's rules")
        return ()
    out = []
    for sent in sentences(sentence, lang="en-us"):
        for w in sent:
            if w.phonemes:
                out.append((w.text.lower(), "".join(w.phonemes)))
    return tuple(out)


def _plain(ipa: str) -> str:
    """Stress, length and r-colouring dropped: gruut and espeak-ng write "perfect" /pɚfɛkt/ and /pɜːfɛkt/."""
    return ipa.translate(str.maketrans({"ˈ": None, "ˌ": None, "ː": None, "ˑ": None, "‿": None, " ": None,
                                        "ɚ": "ɜ", "ɝ": "ɜ", "ɹ": "r"}))


def _gruut_choice(sentence: str, word: str, nth: int, plain: str, alt: str) -> str | None:
    """Which reading ("plain" or "alt") gruut gives the ``nth`` ``word`` of the sentence, if clear."""
    mine = [p for w, p in _tagged(sentence) if w == word]
    if nth >= len(mine):
        return None
    said = _plain(mine[nth])
    a, b = edit_distance(said, _plain(plain)), edit_distance(said, _plain(alt))
    if abs(a - b) < MARGIN:
        return None
    return "plain" if a < b else "alt"


def pronunciation_flags(text: str, spoken: str, language: str, lexicon: Lexicon | None = None) -> list[ProofFlag]:
    """Flags for heteronyms whose reading in ``spoken`` (what the voice got) contradicts their context."""
    if language_family(language) != "en":
        return []
    from studio.text.normalize import heteronyms

    readings = _readings()
    chosen = {w.lower() for m in (lexicon.find(text, language) if lexicon else []) for w in [text[m.start:m.end]]}
    flags: list[ProofFlag] = []
    seen: dict[str, int] = {}
    for m in heteronyms.WORDS.finditer(text):
        word = m.group(0).lower()
        nth = seen.get(word, 0)
        seen[word] = nth + 1
        if word not in readings or word in chosen:
            continue  # the producer's lexicon decides this word
        alt = readings[word]
        given_alt = re.search(rf"(?i)\b{re.escape(alt)}\b", spoken) is not None
        given_plain = re.search(rf"(?i)\b{re.escape(word)}\b", spoken) is not None
        if given_alt == given_plain:
            continue  # both readings in one sentence, or neither: not decidable here
        given = "alt" if given_alt else "plain"
        rules = "alt" if heteronyms.respell(m).lower() != word else "plain"
        plain_ph, alt_ph = phonemes(word, "en"), phonemes(alt, "en")
        other = _gruut_choice(text, word, nth, plain_ph, alt_ph)
        wanted = rules if rules != given else (other if other is not None and other != given else None)
        if wanted is None or wanted == given:
            continue
        said_ph, want_ph = (alt_ph, plain_ph) if given == "alt" else (plain_ph, alt_ph)
        who = "the heteronym rules" if rules == wanted else "the context (part of speech)"
        flags.append(ProofFlag("pronunciation", 1,
                               f"check the pronunciation: \u201c{m.group(0)}\u201d was said /{said_ph}/, "
                               f"{who} call for /{want_ph}/", m.group(0), "", None, None))
    return flags
