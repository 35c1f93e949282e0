"""Which language each paragraph is spoken in.

Why it works this way: the voice (and its phonemizer) is chosen per sentence from
this language, so the answer must be *stable* - the same manuscript must give the
same languages on every import, or cached audio would be thrown away. langdetect is
randomized and not thread-safe, so we use one private, seeded factory behind a
lock. Short passages ("Yes.", a chapter number) are too short to detect reliably;
they take the language of the confident paragraphs around them instead.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import Sequence

from studio.core.language import language_family
from studio.core.types import Book

log = logging.getLogger(__name__)

#: passages with fewer letters than this are not detected but inherited
MIN_LETTERS = 40
#: detections below this probability are treated as unknown
MIN_CONFIDENCE = 0.80
#: a paragraph may only leave its surroundings' language with a clear signal
SWITCH_CONFIDENCE = 0.95
SWITCH_LETTERS = 100
#: detection reads at most this much of a paragraph (plenty, and keeps 10 MB lines cheap)
SAMPLE_CHARS = 1000
#: langdetect averages this many randomized (but seeded) trials; its default of 7
#: costs ~2x the time for no visible gain on paragraph-sized text
TRIALS = 3
#: used when nothing at all could be detected and the file declares nothing
FALLBACK_LANGUAGE = "en"


_LOCK = threading.Lock()
_FACTORY = None




def _factory():  # pragma: no cover - trivial lazy init, exercised by every test
    """The private, seeded langdetect factory (profiles load once, ~1 s)."""
    global _FACTORY
    if _FACTORY is None:
        from langdetect import DetectorFactory
        from langdetect.detector_factory import PROFILES_DIRECTORY

        from studio.text.langdetect_cache import load_factory

        DetectorFactory.seed = 0  # also pin the global one for anyone else using it
        factory = DetectorFactory()
        load_factory(factory, PROFILES_DIRECTORY)  # the profiles, from the studio cache when it has them
        factory.seed = 0
        _FACTORY = factory
    return _FACTORY


def count_letters(text: str, limit: int = SAMPLE_CHARS) -> int:
    """Letters in the first ``limit`` characters (digits and symbols do not count)."""
    return sum(1 for ch in text[:limit] if ch.isalpha())


def detect_language(text: str) -> tuple[str, float]:
    """``(iso639_1, probability)`` of ``text``; ``("", 0.0)`` when undetectable.

    Deterministic: same text, same answer, from any thread. Only the first
    ``SAMPLE_CHARS`` characters are read (and cached on), so a 10 MB paragraph
    costs no more than a page.
    """
    sample = text[:SAMPLE_CHARS]
    letters = [ch for ch in sample if ch.isalpha()]
    if not letters:
        return "", 0.0
    if sum(1 for ch in letters if ch.isupper()) * 2 > len(letters):
        sample = sample.lower()  # ALL-CAPS headings fool the n-gram profiles
    return _detect_sample(sample)


@lru_cache(maxsize=8192)
def _detect_sample(sample: str) -> tuple[str, float]:
    from langdetect.lang_detect_exception import LangDetectException

    with _LOCK:
        detector = _factory().create()
        detector.n_trial = TRIALS
        detector.append(sample)
        try:
            guesses = detector.get_probabilities()
        except LangDetectException:
            return "", 0.0
    totals: Counter[str] = Counter()
    for guess in guesses:
        code = language_family(guess.lang)
        if code:
            totals[code] += guess.prob
    if not totals:
        return "", 0.0
    code, prob = max(totals.items(), key=lambda kv: (kv[1], kv[0]))
    return code, round(min(prob, 1.0), 4)


def clear_cache() -> None:
    """Forget cached detections (tests use it to prove determinism)."""
    _detect_sample.cache_clear()


def assign_languages(
    chapters: Sequence[Sequence[str]], declared: str = ""
) -> tuple[str, list[list[tuple[str, float]]]]:
    """Languages for every paragraph of a book, and the book's own language.

    ``chapters`` holds the paragraph texts per chapter. Returns ``(book_language,
    [[(code, confidence), ...] per chapter])``. A confidence of ``0.0`` means the
    language was inherited, not detected. Inheritance looks inside the chapter
    only: the previous and next confident paragraphs; if they disagree the one
    that matches the book's language wins, else the previous one; with neither,
    the book's language.
    """
    detected = [[_probe(t) for t in ch] for ch in chapters]
    book = language_family(declared) or _majority(detected, chapters) or FALLBACK_LANGUAGE
    out: list[list[tuple[str, float]]] = []
    for ch in detected:
        confident = [
            code if code and prob >= MIN_CONFIDENCE and _may_switch(code, prob, letters, book) else ""
            for code, prob, letters in ch
        ]
        prev_seen = _nearest(confident)
        next_seen = _nearest(confident[::-1])[::-1]
        result = []
        for i, (code, prob, _letters) in enumerate(ch):
            if confident[i]:
                result.append((code, prob))
                continue
            chosen = _inherit(prev_seen[i], next_seen[i], book, texts=chapters, at=(len(out), i))
            result.append((chosen, prob if code == chosen else 0.0))
        out.append(result)
    return book, out


def _probe(text: str) -> tuple[str, float, int]:
    """Detection for passages long enough to be judged, ``("", 0.0, letters)`` otherwise."""
    letters = count_letters(text)
    if letters < MIN_LETTERS:
        return "", 0.0, letters
    code, prob = detect_language(text)
    return code, prob, letters


def _may_switch(code: str, prob: float, letters: int, book: str) -> bool:
    """Short paragraphs need a very clear signal to differ from the book's language."""
    return code == book or prob >= SWITCH_CONFIDENCE or letters >= SWITCH_LETTERS


def _majority(detected: list[list[tuple[str, float, int]]], texts: Sequence[Sequence[str]]) -> str:
    """The language most paragraphs are clearly written in; letters break ties.

    Counting paragraphs rather than letters keeps one long French passage from
    outvoting a dozen short English ones; short passages count when their own weak
    detection is unambiguous (``SWITCH_CONFIDENCE``).
    """
    votes: Counter[str] = Counter()
    letters_by: Counter[str] = Counter()
    loose: Counter[str] = Counter()
    for ch_detected, ch_texts in zip(detected, texts):
        for (code, prob, letters), text in zip(ch_detected, ch_texts):
            if not code and 3 <= letters < MIN_LETTERS:
                code, prob = detect_language(text)
                if prob < SWITCH_CONFIDENCE:
                    code = ""
            if code:
                loose[code] += letters
                if prob >= MIN_CONFIDENCE:
                    votes[code] += 1
                    letters_by[code] += letters
    if votes:
        return max(votes, key=lambda c: (votes[c], letters_by[c], c))
    if loose:
        return max(loose.items(), key=lambda kv: (kv[1], kv[0]))[0]
    return ""


def _nearest(confident: list[str]) -> list[str]:
    """For each index, the last confident language strictly before it ("" if none)."""
    seen = ""
    out = []
    for code in confident:
        out.append(seen)
        if code:
            seen = code
    return out


def _inherit(prev: str, nxt: str, book: str, *, texts: Sequence[Sequence[str]], at: tuple[int, int]) -> str:
    """Language for a passage too short (or too unclear) to detect on its own.

    When the context is unanimous, take it. When it is not (a title before a Latin
    epigraph, a French line between English paragraphs), the passage's own weak
    detection breaks the tie if it names one of the candidates; otherwise the
    neighbours win over the book, and the previous neighbour over the next.
    """
    candidates = {c for c in (prev, nxt, book) if c}
    if len(candidates) == 1:
        return candidates.pop()
    text = texts[at[0]][at[1]]
    if count_letters(text) >= 3:
        guess, _prob = detect_language(text)
        if guess in candidates:
            return guess
    if prev and nxt:
        if prev == nxt:
            return prev
        return book if book in (prev, nxt) else prev
    return prev or nxt or book


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
