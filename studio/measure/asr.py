"""The word error rate of an offline transcription: an intelligibility check for synthesized audio.

Why: "the audio is not silent and has a plausible length" does not prove a voice
says the words. Recognising the rendered sentence with a small offline recogniser
(pocketsphinx and its bundled US-English model, :func:`studio.proof.sphinx.transcribe`:
no network, no GPU, ~0.5 s per sentence) and scoring the word error rate against the
text catches a wrong phonemizer language, broken id maps, garbled batching or padding
leaking into items. The benchmark uses the same two functions.

The score is relative, not absolute: pocketsphinx is a 2010s-era recogniser, so a
perfect voice still gets some errors; compare against a threshold found for a
known-good render, and against silence/noise (which score near 1.0).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")


def normalize_words(text: str) -> list[str]:
    """Lower-case words without punctuation (apostrophes inside words are kept)."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def word_error_rate(reference: str, hypothesis: str) -> float:
    """(substitutions + deletions + insertions) / reference words, after normalising.

    An empty reference gives 0.0 for an empty hypothesis and 1.0 otherwise; the
    value can exceed 1.0 when the hypothesis has many extra words.
    """
    ref = normalize_words(reference)
    hyp = normalize_words(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    # Levenshtein distance over words, one row at a time.
    previous = list(range(len(hyp) + 1))
    for i, ref_word in enumerate(ref, start=1):
        current = [i] + [0] * len(hyp)
        for j, hyp_word in enumerate(hyp, start=1):
            current[j] = min(
                previous[j] + 1,  # deletion
                current[j - 1] + 1,  # insertion
                previous[j - 1] + (ref_word != hyp_word),  # substitution / match
            )
        previous = current
    return previous[-1] / len(ref)
