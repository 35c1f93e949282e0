"""Roman numerals: where a narrator reads them, and as what.

Why context and not shape: "I", "MIX", "CIVIL", "DC" or "MD" look like numerals and
are words or names. A numeral is read only where print uses them: after a ruler's or
pope's name ("Henry VIII" -> "Henry the Eighth"), after a heading word ("Chapter XIV",
"Book II", "Act III", "World War II" -> a cardinal), before "century" (an ordinal),
and as a heading on its own line ("XIV."). The pronoun "I" is a numeral only after a
known ruler's name ("Elizabeth I").
"""

from __future__ import annotations

import re
from typing import Callable

_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
_VALID = re.compile(r"^M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
NUMERAL = r"[IVXLCDM]+"

#: rulers and popes whose numeral may be a single "I"
RULERS = frozenset(
    "Henry Edward Richard George William Charles James Elizabeth Mary Louis Philip Peter Catherine "
    "Frederick Napoleon John Paul Pius Leo Gregory Benedict Innocent Clement Alexander Nicholas Ivan "
    "Ferdinand Isabella Alfonso Henri Wilhelm Friedrich Karl Otto Rudolf Franz Joseph Ludwig Gustav "
    "Gustavus Christian Frederik Olaf Harald Haakon Magnus Eric Erik Sancho Pedro Manuel Juan Carlos Felipe "
    "Umberto Vittorio Ramesses Ramses Thutmose Amenhotep Ptolemy Antiochus Seleucus Darius Xerxes "
    "Artaxerxes Cyrus Constantine Justinian Theodosius Leopold Maximilian Sigismund Casimir Urban "
    "Boniface Celestine Martin Sixtus Julius Adrian Hadrian Eugene Stephen Anne Matilda Malcolm David "
    "Robert Kenneth Duncan Selim Suleiman Mehmed Murad Ahmed Mahmud Victor Emmanuel Wenceslaus Rama "
    "Elizabeth Ludovico Cosimo Lorenzo Innocentius Benedictus Franziskus Jean Louis Charles".split()
)
#: words after which a numeral is a plain number ("Chapter XIV" -> "Chapter fourteen")
HEADINGS = {
    "en": "Chapter Book Part Act Scene Volume Vol Section Article Canto Psalm Appendix Phase Stage Level "
          "Class Type Division Title Figure Plate Table Lesson Unit Episode Round Grade War Apollo Bowl Form",
    "de": "Kapitel Buch Teil Akt Band Abschnitt Artikel Szene Weltkrieg",
    "fr": "Chapitre Livre Partie Acte Tome Volume Scène Article Section",
    "es": "Capítulo Libro Parte Acto Tomo Volumen Escena Artículo Sección",
    "it": "Capitolo Libro Parte Atto Tomo Volume Scena Articolo Sezione",
}
#: capitalised words that are no name: "The DC office", "In MMXX"
_NOT_NAMES = frozenset("The A An In On At Of And Or But For To By From With As If So Then This That Its His Her "
                       "Our Their My Your Der Die Das Le La Les El Los Las Il Lo Gli".split())
#: numerals plausible after any name ("Rocky II"); larger ones only after a known ruler
_SMALL = re.compile(r"^X{0,3}(IX|IV|V?I{0,3})$")
#: words after which a numeral is an ordinal ("secolo XIX" -> "secolo diciannovesimo")
_ORDINAL_HEADS = {"it": "secolo|sec\\.", "de": "Jahrhundert", "en": "Century", "fr": "siècle"}
#: how "Henry VIII" is joined: "Henry the Eighth", "Heinrich der Achte", "Henri huit" ...
_THE = {"en": "the", "de": "der", "es": "", "it": "", "fr": ""}


def value(numeral: str) -> int:
    """``"XIV"`` -> 14; 0 for something that is not a well-formed numeral."""
    if not numeral or not _VALID.match(numeral):
        return 0
    total = 0
    for a, b in zip(numeral, numeral[1:] + " "):
        v = _VALUES[a]
        total += -v if b != " " and _VALUES[b] > v else v
    return total


def rules(language: str, cardinal: Callable[[int, str], str], ordinal: Callable[[int, str], str]) -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    """The numeral rules for ``language``, in the order they are tried."""
    words = HEADINGS.get(language, HEADINGS["en"]).split()
    heads = "|".join(words + [w.upper() for w in words])  # "CHAPTER XIV" in a headline
    the = _THE.get(language, "")

    def heading(m: re.Match[str]) -> str:
        n = value(m.group(2).upper())
        return f"{m.group(1)}{cardinal(n, language)}" if n else m.group(0)

    def regnal(m: re.Match[str]) -> str:
        name, numeral = m.group(1), m.group(2)
        n = value(numeral)
        if not n or name in _NOT_NAMES or (name not in RULERS and (numeral == "I" or not _SMALL.match(numeral))):
            return m.group(0)
        if language == "fr" and n == 1:
            return f"{name} premier"
        if language == "fr":
            return f"{name} {cardinal(n, language)}"
        words = ordinal(n, language)
        if language == "de":
            words = words[:-1] + "e" if words.endswith("e") else words
        if language == "en":
            words = words[:1].upper() + words[1:]
        return f"{name} {the} {words}".replace("  ", " ")

    def century(m: re.Match[str]) -> str:
        n = value(m.group(1))
        return f"{ordinal(n, language)} " if n else m.group(0)

    def alone(m: re.Match[str]) -> str:
        n = value(m.group(1))
        return f"{cardinal(n, language)}{m.group(2)}" if n and m.group(1) != "I" else m.group(0)

    def listed(m: re.Match[str]) -> str:
        n = value(m.group(1))
        numbered = len(re.findall(rf"(?:^|[;:] ){NUMERAL}\.\s", m.string)) > 1
        return f"{cardinal(n, language)}{m.group(2)}" if n and (m.group(1) != "I" or numbered) else m.group(0)

    def ordinal_heading(m: re.Match[str]) -> str:
        n = value(m.group(2))
        return f"{m.group(1)}{ordinal(n, language)}" if n else m.group(0)

    out: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
        (re.compile(rf"\b((?:{_ORDINAL_HEADS.get(language, 'century')})\s+)({NUMERAL})\b"), ordinal_heading),
        (re.compile(rf"\b((?:{heads})\.?\s+)({NUMERAL}|[ivxlc]+)\b(?!['\u2019]\w)"), heading),
        (re.compile(rf"\b({NUMERAL})(?:th|e|ème|º|°)?\s+(?=century|centuries|siècle|Jahrhundert|siglo|secolo)"), century),
        (re.compile(rf"(?<![\w.])([A-Z][a-zà-ÿ]+)\s+({NUMERAL})\b(?![\w'\u2019-])"), regnal),
        (re.compile(rf"^\s*({NUMERAL})([.:]?\s*)$"), alone),
        # a list's numbers in a heading: "I. THE FOLIO WHALE; II. THE OCTAVO WHALE"
        (re.compile(rf"(?:^|(?<=[;:] ))({NUMERAL})(\.\s)(?=[\w(])"), listed),
    ]
    return out
