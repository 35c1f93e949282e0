"""Per-passage language scores: the script first, then lingua in two stages.

Why lingua (and not langdetect any more): on short text it is clearly more accurate,
it is deterministic by construction (no random trials to seed), and it can be
restricted to the languages that plausibly occur, which raises accuracy further.

Why two stages: lingua's high-accuracy mode (n-grams of 1-5 letters) is what makes
single sentences right, but it costs a few milliseconds per call and about a
second of model loading per language. Its low-accuracy mode (trigrams only) is
fast and already right on almost every paragraph of some length. So every passage
gets the fast pass over all candidates, and only the uncertain ones (short, or a
close call) are re-judged in high-accuracy mode among the few languages the fast
pass shortlisted - plus the language the caller expects (the book's), so it is
always in the running.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from typing import Any

from studio.text.scripts import SCRIPT_LANGUAGE, SCRIPT_LANGUAGES, dominant_script

log = logging.getLogger(__name__)

#: the languages considered unless the caller narrows them: those the studio has
#: voices for, plus Latin (epigraphs and quotations in books), plus every language
#: a non-Latin script implies (free: the script alone decides, or narrows to few)
DEFAULT_LANGUAGES = frozenset(
    "en de fr es it pt nl pl cs sk ca da sv nb fi hu ro tr la sl lv cy is sw vi id "
    "ru uk bg sr mk be kk ar fa ur hi mr".split()
) | frozenset(SCRIPT_LANGUAGE.values())
#: the fast pass reads this much (its cost grows with the length; this is plenty)
FAST_CHARS = 160
#: a fast-pass winner at least this sure, on at least LONG_LETTERS letters, stands
#: (unless the caller expects another language there: then the careful pass judges)
SURE = 0.85
LONG_LETTERS = 100
#: a fast-pass winner this sure that is the language expected there stands
PREFER_SURE = 0.6
#: the careful pass reads this much
CAREFUL_CHARS = 300
#: how many fast-pass leaders the high-accuracy pass re-judges
SHORTLIST = 5

_LOCK = threading.Lock()


def language_scores(
    sample: str, candidates: frozenset[str] = DEFAULT_LANGUAGES, prefer: str = "", *, careful: bool = True
) -> dict[str, float]:
    """Confidence per language for ``sample`` (summing to 1), best first; ``{}`` if undecidable.

    ``careful=False`` stops after the fast pass (a first look at a whole book).
    ``prefer`` (the language expected there: the book's or the neighbours') is
    always among the languages the careful pass scores, and a fast-pass winner that
    *is* that language with ``PREFER_SURE`` stands: the expected language needs no
    proof. Deterministic and cached.
    """
    return dict(_scores(sample, candidates, prefer, careful))


@lru_cache(maxsize=16384)
def _scores(sample: str, candidates: frozenset[str], prefer: str, careful: bool) -> tuple[tuple[str, float], ...]:
    script = dominant_script(sample)
    if script in SCRIPT_LANGUAGE:
        return ((SCRIPT_LANGUAGE[script], 1.0),)
    group = SCRIPT_LANGUAGES.get(script, frozenset()) & candidates
    if len(group) <= 1:
        return tuple((code, 1.0) for code in group)
    head = _head(sample, FAST_CHARS)
    fast = _fast(head, group)
    if not careful or not fast:
        return fast
    best, sure = fast[0]
    if sure >= SURE and sum(1 for ch in head if ch.isalpha()) >= LONG_LETTERS and prefer in ("", best):
        return fast  # (trigrams alone once took a plain English paragraph for Norwegian at 85 %)
    if best == prefer and sure >= PREFER_SURE:
        return fast
    shortlist = {code for code, _ in fast[:SHORTLIST]}
    if prefer in group:
        shortlist.add(prefer)
    if len(shortlist) < 2:
        return fast
    return _confidences(_detector(frozenset(shortlist), high=True), _head(sample, CAREFUL_CHARS)) or fast


@lru_cache(maxsize=16384)
def _fast(head: str, group: frozenset[str]) -> tuple[tuple[str, float], ...]:
    return _confidences(_detector(group, high=False), head)


def _head(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters at a word boundary."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", limit // 2, limit)
    return text[: cut if cut > 0 else limit]


def _confidences(detector: Any, sample: str) -> tuple[tuple[str, float], ...]:
    values = detector.compute_language_confidence_values(sample)
    ranked = [(v.language.iso_code_639_1.name.lower(), float(v.value)) for v in values if v.value > 0]
    return tuple(sorted(ranked, key=lambda kv: (-kv[1], kv[0])))


@lru_cache(maxsize=256)
def _detector(codes: frozenset[str], *, high: bool) -> Any:
    """A lingua detector for exactly ``codes`` (models are shared between detectors)."""
    from lingua import Language, LanguageDetectorBuilder

    with _LOCK:
        by_code = {lang.iso_code_639_1.name.lower(): lang for lang in Language.all()}
        languages = [by_code[c] for c in sorted(codes) if c in by_code]
        builder = LanguageDetectorBuilder.from_languages(*languages)
        if not high:
            # models load on first need (lingua keeps them for the process): a short
            # manuscript then loads the trigram models its letters call for, not all
            builder = builder.with_low_accuracy_mode()
        log.debug("language detector for %s (%s accuracy)", ",".join(sorted(codes)), "high" if high else "low")
        return builder.build()


def clear_cache() -> None:
    """Forget cached scores (tests use it to prove determinism)."""
    _scores.cache_clear()
    _fast.cache_clear()


def release_models() -> None:
    """Forget the detectors and unload lingua's models, which it keeps for the process.

    Why: one multilingual book's careful passes leave about 550 MB of n-gram models
    loaded (measured: the book audit of the shared EPUBs), held until the process ends.
    The next detection loads what its text calls for again (a second or so per language).
    """
    from lingua import LanguageDetectorBuilder

    with _LOCK:
        clear_cache()
        _detector.cache_clear()
        LanguageDetectorBuilder.from_all_languages().build().unload_language_models()
