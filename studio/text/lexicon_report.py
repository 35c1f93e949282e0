"""Which words of a book have lexicon entries, and which ones the voice will likely guess.

Why a heuristic for "guessed" words: the Piper voices phonemize with espeak-ng,
which falls back to letter-to-sound rules for a word missing from its dictionary,
but neither espeak-ng's API nor piper's bridge says when it did (the compiled
dictionary is not readable word by word either). A frequency list would do
(``wordfreq``), but it is a 57 MB wheel plus dependencies for a desktop app, for
suggestions only. What the book itself tells is nearly as good for the words that
matter in an audiobook -- names of people and places:

* a word written capitalised in the middle of a sentence (not as its first word)
  and never written in lower case anywhere in the book is a proper noun, and
  proper nouns are exactly what dictionaries lack ("Nguyen", "Altamaha");
* a word in capitals is spelled out if an acronym (``FBI``) and guessed if no dictionary
  has it (``AFFGHANISTAN``); one the dictionary has (``BATTLE``) is read as itself;
* contractions, with a straight or a curly apostrophe ("I’ve", "Don't"), are words;
* a handful of capitalised words every dictionary has (days, months, titles,
  ``I``) are never suggested.

Words already covered by an entry are listed with the entry instead. Both lists
give a count and the first sentence each word occurs in, so the producer can hear
it in context.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from studio.core.lexicon import Lexicon, LexiconEntry
from studio.core.types import Book
from studio.text.normalize import capitals

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
#: a contraction's ending ("I'm", "don't", "we'll"); "'s" is left: "Ahab's" is still Ahab
_CONTRACTION = re.compile(r"(?:n't|'ve|'re|'m|'ll|'d)$", re.I)
#: Capitalised words any English dictionary has; they are not names to check.
_COMMON_CAPITALISED = frozenset(
    """
    i i'm i've i'll i'd mr mrs ms dr st sir madam lord lady god
    monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december
    english french german spanish italian american british european christian christmas easter
    """.split()
)


@dataclass(frozen=True)
class WordUse:
    """A word (or an entry's phrase), how often the book says it, and where first."""

    word: str
    count: int
    first_sentence: str
    language: str
    entry: LexiconEntry | None = None


@dataclass(frozen=True)
class LexiconReport:
    """``with_entries``: words the lexicon decides; ``suggestions``: likely guesses."""

    with_entries: tuple[WordUse, ...]
    suggestions: tuple[WordUse, ...]


def _sentences(book: Book) -> Iterator[tuple[str, str]]:
    for chapter in book.chapters:
        for paragraph in chapter.paragraphs:
            for sentence in paragraph.sentences:
                yield sentence.text, sentence.language


def lexicon_report(book: Book, lexicon: Lexicon, *, max_suggestions: int = 200) -> LexiconReport:
    """Entries in use and suggested words, most frequent first (see module docstring)."""
    return report_for_sentences(_sentences(book), lexicon, max_suggestions=max_suggestions)


def report_for_sentences(
    sentences: Iterable[tuple[str, str]], lexicon: Lexicon, *, max_suggestions: int = 200
) -> LexiconReport:
    """The same report for ``(text, language)`` pairs in reading order (a project's rows)."""
    used: dict[tuple[str, str, bool], list] = {}
    # casefolded word -> [forms seen, count, first sentence, language, capitalised mid-sentence]
    words: dict[str, list] = {}
    lower_seen: set[str] = set()
    for text, language in sentences:
        matches = lexicon.find(text, language) if lexicon else []
        for m in matches:
            slot = used.setdefault(m.entry.key, [m.entry, 0, text, language])
            slot[1] += 1
        covered = [(m.start, m.end) for m in matches]
        first = True
        for w in _WORD.finditer(text):
            word = w.group(0).replace("’", "'")
            if _CONTRACTION.search(word):
                first = False
                continue  # "I’ve", "Don't": words, whichever apostrophe, never names
            if word[-2:].lower() == "'s" and len(word) > 3:
                word = word[:-2]  # "Ahab’s": the name is Ahab
            folded = word.casefold()
            if word[0].islower():
                lower_seen.add(folded)
            if any(a <= w.start() < b for a, b in covered):
                first = False
                continue
            slot = words.setdefault(folded, [Counter(), 0, text, language, False])
            slot[0][word] += 1
            slot[1] += 1
            if not first and word[0].isupper():
                slot[4] = True
            first = False
    with_entries = sorted(
        (WordUse(e.grapheme, n, s, lang, e) for e, n, s, lang in used.values()),
        key=lambda u: (-u.count, u.word.casefold()),
    )
    suggestions = [
        WordUse(forms.most_common(1)[0][0], n, s, lang)
        for folded, (forms, n, s, lang, mid) in words.items()
        if _suggest(forms, folded, mid, lower_seen)
    ]
    suggestions.sort(key=lambda u: (-u.count, u.word.casefold()))
    return LexiconReport(tuple(with_entries), tuple(suggestions[:max_suggestions]))


def _suggest(forms: Counter[str], folded: str, capitalised_mid_sentence: bool, lower_seen: set[str]) -> bool:
    if folded in _COMMON_CAPITALISED or folded in lower_seen or len(folded) < 2:
        return False
    if all(form.isupper() for form in forms):
        # only ever in capitals: an acronym (spelled out) or a word the dictionary lacks (guessed);
        # a word in capitals the dictionary has ("BATTLE") is read as that word
        word = forms.most_common(1)[0][0]
        if word in capitals.WORD_ACRONYMS or capitals.is_acronym(word):
            return True
        return not capitals.known(word) & capitals.AS_WORD
    return capitalised_mid_sentence
