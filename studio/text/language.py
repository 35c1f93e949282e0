"""Which language each paragraph is spoken in.

Why it works this way: the voice (and its phonemizer) is chosen per sentence from
this language, so the answer must be right *and stable* - the same manuscript must
give the same languages on every import, or cached audio would be thrown away.
Each passage is scored by :mod:`studio.text.detector` (the script first, then
lingua; deterministic). A book is mostly in one language, so a passage must
*clearly* beat the language around it before it is read in another: its
neighbours' language when they agree, else the book's. How clearly depends on its
length - one short line needs a strong signal, a long paragraph barely any. Passages
with almost no letters ("1914", "!!!") simply take the language around them.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import replace
from typing import Callable, Sequence

from studio.core.language import language_family
from studio.core.types import Book
from studio.text.detector import DEFAULT_LANGUAGES, language_scores
from studio.text.evidence import FUNCTION_WORDS, distinct_words, evidence, function_words
from studio.text.scripts import dominant_script

log = logging.getLogger(__name__)

#: passages with fewer letters than this are not detected but take their context's language
MIN_LETTERS = 3
#: paragraphs this long, detected this surely, vote for the book's language and steer their neighbours
RELIABLE_LETTERS = 40
RELIABLE_CONFIDENCE = 0.80
#: shorter passages vote for the book's language only when this sure
SHORT_VOTE_CONFIDENCE = 0.6
#: leaving the context's language takes odds of exp(PRIOR_BASE + PRIOR_SHORT * PRIOR_LETTERS / (letters + PRIOR_LETTERS))
PRIOR_BASE = 0.5
PRIOR_SHORT = 3.0
PRIOR_LETTERS = 40
#: a passage needs this many different words to leave its context's language ("word word word" never does)
MIN_DISTINCT_WORDS = 3
#: this many function words of a language are strong evidence for it
STRONG_FUNCTION_WORDS = 2
#: passages with fewer letters than this leave their context's language only for another script
SCRIPT_ONLY_LETTERS = 8
#: function words take a passage from its context only when the detector's log-odds for their
#: language over the context's are at least this (an interjection that is a German word, "So",
#: "Die", in an English line the detector reads as English, leaves it English)
FUNCTION_WORD_FLOOR = 0.0
#: the detector's leaders whose function words are counted too (lingua may rank Latin above the Italian it is)
FUNCTION_WORD_RIVALS = 3
#: extra log-odds needed when neither language's function words are there to confirm
NO_FUNCTION_WORDS_ODDS = 1.5
#: detection reads at most this much of a paragraph (plenty, and keeps 10 MB lines cheap)
SAMPLE_CHARS = 500
#: used when nothing at all could be detected and the file declares nothing: the
#: bundled voice's language (a short text leaves it only on strong evidence)
FALLBACK_LANGUAGE = "en"
#: a book with fewer letters of evidence than this, declaring no language, is "short":
#: its main language is the expected one unless the evidence is strong (see _book_language)
SHORT_BOOK_LETTERS = 600
#: strong evidence in a short book: another script, or this sure over this many letters
STRONG_CONFIDENCE = 0.99
STRONG_LETTERS = 30


__all__ = ["apply_language_override", "assign_languages", "count_letters", "detect_language"]




def count_letters(text: str, limit: int = SAMPLE_CHARS) -> int:
    """Letters in the first ``limit`` characters (digits and symbols do not count)."""
    return sum(1 for ch in text[:limit] if ch.isalpha())


def _sample(text: str) -> str:
    """What the detector reads: the first ``SAMPLE_CHARS`` characters, ALL-CAPS lowered
    (capitals fool the n-gram models), then only the words that are evidence of a
    language (:func:`studio.text.evidence.evidence`: no numbers, acronyms, Roman
    numerals, units, abbreviations or names)."""
    sample = text[:SAMPLE_CHARS]
    letters = [ch for ch in sample if ch.isalpha()]
    if letters and sum(1 for ch in letters if ch.isupper()) * 2 > len(letters):
        return evidence(sample).lower()  # its words in capitals judged first: a word no dictionary has is no evidence
    return evidence(sample)


def _candidates(languages: frozenset[str] | None) -> frozenset[str]:
    return frozenset(language_family(c) for c in languages) - {""} if languages else DEFAULT_LANGUAGES


def detect_language(text: str, languages: frozenset[str] | None = None) -> tuple[str, float]:
    """``(iso639_1, confidence)`` of ``text`` on its own; ``("", 0.0)`` when undetectable.

    Deterministic: same text, same answer, from any thread. ``languages`` narrows
    the candidates (default :data:`DEFAULT_LANGUAGES`). Only the first
    ``SAMPLE_CHARS`` characters are read, so a 10 MB paragraph costs no more than a page.
    """
    sample = _sample(text)
    if count_letters(sample) < MIN_LETTERS:
        return "", 0.0
    scores = language_scores(sample, _candidates(languages))
    if not scores:
        return "", 0.0
    code, prob = next(iter(scores.items()))
    return code, round(min(prob, 1.0), 4)


def assign_languages(
    chapters: Sequence[Sequence[str]], declared: str = "", languages: frozenset[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[str, list[list[tuple[str, float]]]]:
    """Languages for every paragraph of a book, and the book's own language.

    ``chapters`` holds the paragraph texts per chapter. Returns ``(book_language,
    [[(code, confidence), ...] per chapter])``; a confidence of ``0.0`` means the
    language was taken from the context, not detected. The book's language is the
    declared one, else the one most paragraphs are clearly in. A passage is judged
    against its context (:func:`_decide`; one with nothing to detect simply takes
    it): the language decided for the last detected passage before it in its
    chapter and that of the next reliable paragraph after it - when they disagree,
    the book's if it is one of them, else the one before; with one, that one; with
    none, the book's.

    ``progress(stage, chapter, chapters)`` hears each chapter of both passes: a long book's
    detection takes seconds, and an import's progress has to move meanwhile.
    """
    step = progress or (lambda _stage, _done, _total: None)
    candidates = _candidates(languages)
    samples = [[_sample(t) for t in ch] for ch in chapters]
    letters = [[count_letters(s) for s in ch] for ch in samples]
    scores = []
    for n, (ch, ns) in enumerate(zip(samples, letters)):
        step("Detecting languages", n, len(chapters))
        scores.append([language_scores(s, candidates, careful=False) if k >= MIN_LETTERS else {}
                       for s, k in zip(ch, ns)])
    book = language_family(declared) or _book_language(scores, letters, samples)
    out: list[list[tuple[str, float]]] = []
    for n, (ch_samples, ch_letters, ch_scores) in enumerate(zip(samples, letters, scores)):
        step("Choosing each passage's language", n, len(chapters))
        reliable = [_top(sc) if n >= RELIABLE_LETTERS and _top(sc, RELIABLE_CONFIDENCE) else "" for sc, n in zip(ch_scores, ch_letters)]
        after = _nearest(reliable[::-1])[::-1]
        before = ""
        result = []
        for i, (sample, sc, n) in enumerate(zip(ch_samples, ch_scores, ch_letters)):
            context = _context(before, after[i], book)
            if sc:
                sc = language_scores(sample, candidates, prefer=context)
            code = _decide(sc, n, context, sample, book)
            if sc:
                before = code
            result.append((code, round(min(sc.get(code, 0.0), 1.0), 4)))
        out.append(result)
    return book, out


def _top(scores: dict[str, float], at_least: float = 0.0) -> str:
    for code, prob in scores.items():
        return code if prob >= at_least else ""
    return ""


def _book_language(scores: list[list[dict[str, float]]], letters: list[list[int]], samples: list[list[str]]) -> str:
    """The main language of a book that declares none: the majority's, except that a
    short text (under SHORT_BOOK_LETTERS letters of evidence) leaves FALLBACK_LANGUAGE
    only on strong evidence: another script, or a detection at STRONG_CONFIDENCE over
    STRONG_LETTERS letters."""
    found = _majority(scores, letters)
    if not found or found == FALLBACK_LANGUAGE:
        return found or FALLBACK_LANGUAGE
    if sum(n for ch in letters for n in ch) >= SHORT_BOOK_LETTERS:
        return found
    for ch_scores, ch_letters, ch_samples in zip(scores, letters, samples):
        for sc, n, sample in zip(ch_scores, ch_letters, ch_samples):
            if _top(sc) == found and (dominant_script(sample) != "Latin" or (n >= STRONG_LETTERS and _top(sc, STRONG_CONFIDENCE))):
                return found
    return FALLBACK_LANGUAGE


def _decide(scores: dict[str, float], letters: int, context: str, sample: str = "", book: str = "") -> str:
    """The passage's language: its own best one only on strong evidence, else ``context``.

    Strong evidence (a book is in one language; a misread passage is the loudest mistake
    in the audio): another script (``context`` is no candidate at all); or several
    function words of one language, more than of the others in play (the detector's
    leaders, the context's, the book's), which also brings a passage back to the book's language
    after a quotation; or, with no function words to go by, odds over ``context`` of
    exp(PRIOR_BASE + PRIOR_SHORT * PRIOR_LETTERS / (letters + PRIOR_LETTERS)) - about
    20:1 for the shortest line, 2:1 for a long paragraph - and more when both languages
    have function-word lists and none of their words is there. A line of one repeated
    word never leaves its context.
    """
    best = _top(scores)
    if not best:
        return context
    if scores.get(context, 0.0) <= 0.0 and best != context:
        return best  # another script: the context's language is no candidate at all
    if distinct_words(sample) < MIN_DISTINCT_WORDS or letters < SCRIPT_ONLY_LETTERS:
        return context  # a very short passage ("Bravo, Signor!") leaves its context only on script
    in_play = {best, context, book, *list(scores)[:FUNCTION_WORD_RIVALS]}
    counts = {code: function_words(sample, code) for code in in_play if code and code in scores}
    ranked = sorted(counts.values(), reverse=True)
    lead = max(counts, key=lambda c: (counts[c], c == context, c == book)) if counts else ""
    if lead and ranked[0] >= STRONG_FUNCTION_WORDS and (len(ranked) < 2 or ranked[0] > ranked[1]) \
            and (lead == context or _log_ratio(scores, lead, context) >= FUNCTION_WORD_FLOOR):
        return lead  # the small words confirm it, and the detector does not find the context likelier
    if best == context:
        return best
    if best == book and counts.get(book, 0) > counts.get(context, 0):
        return book  # back to the book's language after a quotation
    if counts.get(context, 0) > counts.get(best, 0) and best in FUNCTION_WORDS:
        return context  # its small words are the context's, whatever the n-grams say
    needed = PRIOR_BASE + PRIOR_SHORT * PRIOR_LETTERS / (letters + PRIOR_LETTERS)
    if best == book:
        needed = PRIOR_BASE  # the book's language is the strong prior, a quotation's a weak one
    elif best in FUNCTION_WORDS and context in FUNCTION_WORDS:
        needed += NO_FUNCTION_WORDS_ODDS
    return best if math.log(scores[best] / scores[context]) > needed else context


def _log_ratio(scores: dict[str, float], a: str, b: str) -> float:
    """log(P(a) / P(b)) by the detector (a language it gives nothing counts as 1e-9)."""
    return math.log(max(scores.get(a, 0.0), 1e-9) / max(scores.get(b, 0.0), 1e-9))


def _context(before: str, after: str, book: str) -> str:
    """The language around a passage: the one before it when the next reliable paragraph
    agrees or there is none, else the book's; at a chapter's start, the book's - never what
    follows, so a heading is not given the language of the quotation under it."""
    if before and after and before != after:
        return book
    return before or book


def _majority(scores: list[list[dict[str, float]]], letters: list[list[int]]) -> str:
    """The language most paragraphs are clearly in; letters break ties.

    Counting paragraphs rather than letters keeps one long French passage from
    outvoting a dozen short English ones; short passages count when their own
    detection is unambiguous. With no clear vote, the language with the most
    letters behind its detections.
    """
    votes: Counter[str] = Counter()
    letters_by: Counter[str] = Counter()
    loose: Counter[str] = Counter()
    for ch_scores, ch_letters in zip(scores, letters):
        for sc, n in zip(ch_scores, ch_letters):
            code = _top(sc)
            if not code:
                continue
            loose[code] += n
            if _top(sc, RELIABLE_CONFIDENCE if n >= RELIABLE_LETTERS else SHORT_VOTE_CONFIDENCE):
                votes[code] += 1
                letters_by[code] += n
    if votes:
        return max(votes, key=lambda c: (votes[c], letters_by[c], c))
    if loose:
        return max(loose.items(), key=lambda kv: (kv[1], kv[0]))[0]
    return ""


def _nearest(codes: list[str]) -> list[str]:
    """For each index, the last non-empty code strictly before it ("" if none)."""
    seen = ""
    out = []
    for code in codes:
        out.append(seen)
        if code:
            seen = code
    return out


def apply_language_override(
    book: Book, chapter_idx: int, paragraph_idx: int, lang: str | None
) -> Book:
    """A new Book where one paragraph (and its sentences) is spoken in ``lang``.

    ``lang`` is normalized (``fr_FR`` -> ``fr``); ``None`` or ``""`` removes the
    override so the detected language applies again. Raises ``IndexError`` for a
    paragraph that does not exist and ``ValueError`` for an unknown code.
    """
    if not 0 <= chapter_idx < len(book.chapters):
        raise IndexError(f"no chapter {chapter_idx} (book has {len(book.chapters)})")
    chapter = book.chapters[chapter_idx]
    if not 0 <= paragraph_idx < len(chapter.paragraphs):
        raise IndexError(f"no paragraph {paragraph_idx} in chapter {chapter_idx}")
    code: str | None = None
    if lang:
        code = language_family(lang)
        if not code:
            raise ValueError(f"not a language code: {lang!r}")
    para = chapter.paragraphs[paragraph_idx]
    effective = code or para.language
    new_para = replace(
        para,
        language_override=code,
        sentences=tuple(replace(s, language=effective) for s in para.sentences),
    )
    paragraphs = chapter.paragraphs[:paragraph_idx] + (new_para,) + chapter.paragraphs[paragraph_idx + 1 :]
    chapters = list(book.chapters)
    chapters[chapter_idx] = replace(chapter, paragraphs=paragraphs)
    log.debug("language override: chapter %d paragraph %d -> %s", chapter_idx, paragraph_idx, effective)
    return replace(book, chapters=tuple(chapters), metadata=dict(book.metadata))
