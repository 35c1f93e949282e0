"""A book audit: every place the voice would say something other than as a narrator reads it.

Why before rendering: a symbol's name spoken ("exclamation"), a word spelled letter by
letter, an English passage given another language's rules or a word the phonemizer can
only guess is heard only in the finished audio, hours later. The audit lists them by
kind, with their sentences (``studio inspect BOOK --audit``, the desktop's audit panel).

Symbols are found with the voice's own front end as the oracle (the caller hands in
its ``phonemize``, the one the render uses): a sentence's phonemes must hold the
phonemes of its words and nothing else, so a mark espeak-ng names anywhere shows up as
letters the words do not have. Everything else is read from the text: the capitals
rule's spellings, the sentences whose language is not the book's, the lexicon report's
guessed words and the heteronyms the rules and the part-of-speech tagger disagree on.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

from studio.core.language import language_family
from studio.text.normalize import capitals, marks
from studio.text.spoken_report import SpokenSentence

#: the kinds of finding, in the order a producer reads them, with what each means
KINDS: dict[str, str] = {
    "silent": "a passage left out of the audio: a note, a caption, alt text, a table, code the project does not read, "
              "or a language no voice speaks",
    "symbol": "a symbol or punctuation mark the voice would say by name",
    "spelled": "a word in capitals the voice would spell letter by letter",
    "language": "a sentence read by another language's rules than the book's",
    "guessed": "a word the phonemizer can only guess (no lexicon entry)",
    "heteronym": "a word said two ways whose reading here is not certain",
}
Phonemize = Callable[[str, str], str]
#: how often (in sentences) the audit reports its progress
PROGRESS_EVERY = 200
#: the pauses the oracle splits a sentence at (not an abbreviation's dot: espeak-ng reads "N." as "north")
_PAUSE_AT_WORD_END = re.compile(r"[,;:!?…]|(?<=[a-z]{3})\.(?=\s|$)")
_NOT_LETTERS = re.compile(r"[\sˈˌ,.;:!?…]")


@dataclass(frozen=True)
class Finding:
    """One place to listen to: ``chapter`` and ``index`` as ``studio inspect --spoken`` numbers them."""

    kind: str
    chapter: int
    index: int
    text: str
    detail: str
    language: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Audit:
    book_language: str
    sentences: int
    words: int
    findings: tuple[Finding, ...]

    def of_kind(self, kind: str) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind == kind)

    def counts(self) -> dict[str, int]:
        return {kind: len(self.of_kind(kind)) for kind in KINDS}

    def silent_counts(self) -> dict[str, int]:
        """The passages left out, by what they are ("code blocks": 3)."""
        return dict(Counter(f.detail for f in self.of_kind("silent")))


def named_marks(spoken: str, language: str, phonemize: Phonemize) -> str:
    """What ``phonemize`` says in ``spoken`` beyond its words ("" when nothing): the phoneme
    words it adds, found by comparing with the pieces between its pauses said one by one
    (no mark left in them to name, and no joining of words across a pause)."""
    said = phonemize(spoken, language)
    pieces = [p for p in _PAUSE_AT_WORD_END.split(marks.quiet(spoken)) if p.strip()]
    bare = " ".join(phonemize(p, language) for p in pieces)
    if _NOT_LETTERS.sub("", said) == _NOT_LETTERS.sub("", bare):
        return ""
    a, b = (re.sub(r"[,.;:!?…]", " ", x.replace("ˈ", "").replace("ˌ", "")).split() for x in (bare, said))
    added = [w for op, _i1, _i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b).get_opcodes()
             if op in ("insert", "replace") for w in b[j1:j2]]
    return " ".join(added) or said


#: the consonants of the pronouncing dictionary's phones, as the voice's front end writes them
_CONSONANTS = {"B": "b", "CH": "tʃ", "D": "d", "DH": "ð", "F": "f", "G": "ɡ", "HH": "h", "JH": "dʒ", "K": "k", "L": "l",
               "M": "m", "N": "n", "NG": "ŋ", "P": "p", "R": "ɹ", "S": "s", "SH": "ʃ", "T": "t", "TH": "θ", "V": "v",
               "W": "w", "Z": "z", "ZH": "ʒ"}
_IPA_CONSONANTS = re.compile(r"tʃ|dʒ|[bdðfɡhklmnŋpɹsʃtθvwzʒ]")
_IPA_SAME = str.maketrans({"ɾ": "t", "ʔ": "t", "g": "ɡ", "r": "ɹ", "ɫ": "l"})


def said_as_the_dictionary(word: str, phonemize: Phonemize) -> bool:
    """Whether the pronouncing dictionary knows ``word`` (English) and the voice says its consonants
    as the dictionary does: then a capitalised word ("Virginia", "Greek", "John") is no guess,
    whatever its capital suggested. Vowels are not compared (the voice's accent decides them)."""
    from studio.text.normalize.capitals import pronunciations

    known = pronunciations(word)
    if not known:
        return False
    said = _IPA_CONSONANTS.findall(phonemize(word, "en").translate(_IPA_SAME))
    return any(said == [_CONSONANTS[p] for p in phones if p in _CONSONANTS] for phones in known)


#: a text whose marks are only clause pauses before a space or its end, quotation marks, and apostrophes
#: and hyphens inside words: nothing in it for a voice to name (most of a novel's sentences)
_PAUSES_ONLY = re.compile(r"(?:[^\W_]|\s|[\"“”‘’«»]|(?<=\w)['’-](?=\w)|[,;!?](?=[\s\"“”’»]|$)|\.(?=[\"”’»]*$))*")


def _only_pauses(spoken: str) -> bool:
    """Whether ``spoken`` holds only marks no voice names (then asking the voice whether it names
    one, several calls of its front end, is skipped)."""
    return bool(_PAUSES_ONLY.fullmatch(spoken))


_SPELLED = re.compile(r"(?:[A-Z] )+[A-Z](?:'s)?")


def spelled_words(text: str) -> list[str]:
    """The words in capitals of ``text`` the capitals rule spells letter by letter (English)."""
    return [m.group(0) for m in capitals.CAPITALS.finditer(text) if _SPELLED.fullmatch(capitals.say(m))]


def audit_sentences(
    sentences: Sequence[SpokenSentence], book_language: str, *, phonemize: Phonemize | None = None,
    guessed: Iterable[tuple[str, int, str]] = (), heteronyms: Callable[[str], list[str]] | None = None,
    silent: Iterable[tuple[SpokenSentence, str]] = (), known: Callable[[str], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Audit:
    """The findings for ``sentences`` (a book's, as :func:`studio.text.spoken_report.book_sentences`
    lists them). ``phonemize(text, language)``: the voice's front end (None: symbols not checked);
    ``guessed``: (word, count, first sentence) from the lexicon report; ``heteronyms(text)``: the
    words of an English sentence whose reading is uncertain; ``silent``: the sentences left out of
    the audio, with why (listed, not checked); ``known(word)``: a word the lexicon decides (not
    listed as spelled); ``progress(done, total)`` hears every few hundred sentences (it may raise to
    stop the audit). A word spelled is listed once, with its count and first sentence, so a code
    an author spells ("Theorem VFSLS") is one row to accept, not one per use."""
    book = language_family(book_language) or "en"
    findings: list[Finding] = [Finding("silent", s.chapter, s.index, s.text, why, s.language) for s, why in silent]
    first: dict[str, SpokenSentence] = {}
    spelled: dict[str, list] = {}  # word -> [count, first sentence]
    words = 0
    for n, s in enumerate(sentences):
        if progress is not None and n % PROGRESS_EVERY == 0:
            progress(n, len(sentences))
        words += len(s.text.split())
        family = language_family(s.language) or book
        first.setdefault(s.text, s)
        if phonemize is not None and any(marks.is_mark(c) for c in s.spoken) and not _only_pauses(s.spoken):
            extra = named_marks(s.spoken, s.language, phonemize)
            if extra:
                findings.append(Finding("symbol", s.chapter, s.index, s.text, extra, s.language))
        if family == "en":
            for w in spelled_words(s.text):
                if known is None or not known(w):
                    spelled.setdefault(w, [0, s])[0] += 1
            if heteronyms is not None:
                findings.extend(Finding("heteronym", s.chapter, s.index, s.text, w, s.language) for w in heteronyms(s.text))
        if family != book:
            findings.append(Finding("language", s.chapter, s.index, s.text, family, s.language))
    findings.extend(Finding("spelled", s.chapter, s.index, s.text, f"{w} ({n}x)", s.language)
                    for w, (n, s) in spelled.items())
    for word, count, sentence in guessed:
        where = first.get(sentence)
        english = (language_family(where.language) if where else book) == "en"
        if english and phonemize is not None and said_as_the_dictionary(word, phonemize):
            continue  # "Virginia", "Greek": only its capital made it look like a guess
        findings.append(Finding("guessed", where.chapter if where else 0, where.index if where else 0, sentence,
                                f"{word} ({count}x)"))
    order = list(KINDS)
    findings.sort(key=lambda f: (order.index(f.kind), f.chapter, f.index))
    return Audit(book, len(sentences), words, tuple(findings))
