"""What in a passage says which language it is in: not numbers, acronyms, Roman numerals,
units, abbreviations or names.

Why: a one-line English text like "The BBC hired Dafydd Rhys in 1998." was given Welsh
at 99.99 %: the statistical detector judges every letter, and here the letters that
are not English are a name. Numbers, acronyms ("FBI", "GB"), Roman numerals ("XIV"),
units ("km"), abbreviations ("Dr.", "p.m.") and capitalised words inside a sentence
(names, mostly) are the same in every language or belong to the name's language, not
the text's, so they are taken out of what the detector reads, and out of the count of
letters that decides how much a passage's own verdict may overrule its context.

Words in capitals are judged as the normaliser judges them (:mod:`studio.text.normalize.capitals`):
an acronym is no evidence, a word in capitals is the word, case-folded -- when the pronouncing
dictionary knows it: one it does not know is a name or an invented word ("PEKEE-NUEE-NUEE,
ERROMANGOAN."), which the n-gram models would give to any language (Swahili, here).

German capitalises every noun; its passages still have their articles, verbs and
function words in lower case, which is what the detector needs.
"""

from __future__ import annotations

import re
from functools import lru_cache

from studio.text.normalize import capitals

_TOKEN = re.compile(r"\S+")
_EDGE = "\"'()[]{}«»“”‘’„‚‹›¿¡*_"
_ABBREVIATION = re.compile(r"^(?:[A-Za-z]{1,4}\.)+$|^[A-Z][a-z]{0,3}\.$")
_UNITS = frozenset("km cm mm m kg g mg mi ft yd lb lbs oz mph kph ml l gb mb tb kb ghz mhz hz kw w v s h min".split())
_SENTENCE_END = ".!?:;\u2026"
_PARTS = re.compile(r"[-'’]")


@lru_cache(maxsize=16384)
def evidence(text: str) -> str:
    """``text`` without the words that carry no evidence of its language (see the module docstring).

    The first word of a sentence stays (it is capitalised for being first, not for being
    a name), unless it is itself a number, an acronym or the like.
    """
    kept: list[str] = []
    start = True
    caps = capitals.running_capitals(text)
    for m in _TOKEN.finditer(text):
        raw = m.group(0)
        word = raw.strip(_EDGE)
        core = word.rstrip(_SENTENCE_END + ",")
        first, start = start, bool(word) and word[-1] in _SENTENCE_END and not _ABBREVIATION.match(word)
        if not core or not any(ch.isalpha() for ch in core):
            continue
        if any(ch.isdigit() for ch in core) or _ABBREVIATION.match(word) or core.lower() in _UNITS:
            continue
        letters = [ch for ch in core if ch.isalpha()]
        if len(letters) >= 2 and all(ch.isupper() for ch in letters):
            if not capitals.is_word(core, caps):
                continue  # acronym or Roman numeral ("FBI", "XIV", "GB")
            if not all(capitals.known(part) for part in _PARTS.split(core) if part):
                continue  # a name or an invented word in capitals ("PEKEE-NUEE-NUEE, ERROMANGOAN."): no language's
            core = core.lower()  # a word in capitals: the normaliser reads it as the word
        if not first and core[:1].isupper():
            continue  # a name inside a sentence
        kept.append(core)
    return " ".join(kept)


def evidence_letters(text: str) -> int:
    """How many letters of ``text`` are evidence of its language."""
    return sum(1 for ch in evidence(text) if ch.isalpha())


#: each language's most frequent short words: several of them in a passage are strong
#: evidence that it is in that language, whatever the statistical detector says
FUNCTION_WORDS = {code: frozenset(words.split()) for code, words in {
    "en": "the and of to is in that it was for you with he be on not are his they this but have at as what by "
          "from or had were would there their been has which she her we my me an will all so if when who them",
    "de": "der die das und ist nicht ein eine zu den ich sie es mit sich auf dem des auch wie wenn nur war sind "
          "noch aber oder dass bei aus einen einem werden wird kein nach um",
    "fr": "le la les et est un une des du que qui ne pas dans pour sur au aux ce cette il elle je nous vous avec "
          "son sa ses mais ou sont été être très c'est qu'il n'est",
    "es": "el la los las y es un una que del en por con para no se lo su al pero como más muy está son fue este "
          "esta eso hay yo",
    "it": "il di che la per non è una sono con gli del della le nel ma più come anche questo questa ho ha essere "
          "un lo dei delle alla",
    "pt": "o os que da do de não é uma com para em se na no as mais mas como você ao dos das um ele ela está "
          "são foi",
    "nl": "de het een en van is dat niet ik je te op met voor zijn maar ook als er aan om bij wat dit hij zij "
          "was naar",
    "la": "et in est non ad cum sed ut quod qui quae de ex per si enim nec sunt esse atque aut neque vel quam "
          "hoc ab etiam autem",
    "nb": "og i det er en som på til av for med ikke har de at jeg var den et seg men om han hun skal vi kan fra",
    "da": "og i det er en som på til af for med ikke har de at jeg var den et sig men om han hun skal vi kan fra",
    "sv": "och i att det är en som på för med inte har de jag var den ett sig men om han hon ska vi kan från",
    "pl": "nie się na jest że w to z i do jak co tak ale ja za od po już być są był było jego",
    "cs": "je se na že to v a ne jsem jak by do ale si když jen byl není aby tak jsou být jeho",
    "sk": "je sa na že to v a nie som ako by do ale si keď len bol aby tak sú byť jeho",
    "ca": "el la els les i és un una que del en per amb no es ho més però com aquest aquesta són",
    "ro": "și în este cu pe la un o care nu se ce mai din pentru sunt fost ca dar",
}.items()}
_WORDS = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def function_words(text: str, language: str) -> int:
    """How many of ``text``'s words are among ``language``'s function words (0 for a language without a list)."""
    words = FUNCTION_WORDS.get(language)
    if not words:
        return 0
    return sum(1 for w in _WORDS.findall(text.lower()) if w in words)


def distinct_words(text: str) -> int:
    """How many different words ``text`` has (a line of one repeated word has one)."""
    return len(set(_WORDS.findall(text.lower())))

