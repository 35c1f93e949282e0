"""Proof any recording against its text: where each sentence is, and what is wrong with it.

Why in two passes: a chapter recorded by a narrator (or rendered elsewhere) comes
as one file, so first the whole recording is transcribed with word times and the
heard words are matched to the text's words (``difflib``'s matching blocks: linear
enough for a chapter, and robust to the odd misheard word); a sentence runs from
its first matched word to its last (sentences with no matched word get the gap
between their neighbours). Then each sentence's stretch of audio goes through the
same checker as a project's sentences, so the flags mean the same thing.
What is expected is the text as given: no lexicon or spoken form stands behind it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.audio.resample import resample
from studio.core.errors import StudioError
from studio.project.proofs import ProofRecord
from studio.proof.check import Checker, ProofItem
from studio.proof.listen import RATE, whisper_language
from studio.proof.words import normalize_words

PAD_BEFORE_S = 0.15
PAD_AFTER_S = 0.25


@dataclass(frozen=True)
class TimedVerdict:
    """One sentence of a recording: its place (seconds) and its verdict."""

    index: int
    text: str
    start: float
    end: float
    record: ProofRecord


def read_sentences(path: Path) -> list[str]:
    """The text file's sentences (paragraphs split the way the studio splits manuscripts)."""
    from studio.text.segment import is_speakable, split_paragraphs, split_sentences

    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise StudioError(f"cannot read the text {path}: {err}") from err
    return [s.text for para in split_paragraphs(text) for s in split_sentences(para) if is_speakable(s.text)]


def proof_recording(checker: Checker, audio_path: Path, sentences: list[str], language: str) -> list[TimedVerdict]:
    """Every sentence of ``sentences`` located in the recording and checked."""
    from studio.audio.measure import quiet_edges, read_audio

    if whisper_language(language) is None:
        raise StudioError(f"the speech model does not know language {language!r}; this recording cannot be checked")
    audio, rate = read_audio(audio_path)
    mono = np.asarray(audio, np.float32).reshape(-1)
    if mono.size == 0:
        raise StudioError(f"{audio_path} holds no audio")
    heard = _heard_words(checker, resample(mono, rate, RATE), language)
    spans = _locate(sentences, heard, len(mono) / rate, language)
    total = len(mono) / rate
    items, placed = [], []
    for k, (text, (start, end)) in enumerate(zip(sentences, spans)):
        # up to the next sentence's first word: a last word the recogniser did not match stays in
        a = max(0.0, start - PAD_BEFORE_S, spans[k - 1][1] if k else 0.0)
        b = max(end + PAD_AFTER_S, spans[k + 1][0] - PAD_BEFORE_S) if k + 1 < len(spans) else total
        b = min(b, spans[k + 1][0]) if k + 1 < len(spans) else b
        piece = mono[int(a * rate):int(min(total, b) * rate)]
        head, tail = quiet_edges(piece, rate)
        placed.append((a + head, max(a + head, a + piece.size / rate - tail)))
        items.append(ProofItem(piece, rate, text, language))
    records = checker.check(items)
    return [TimedVerdict(i, text, round(s, 2), round(e, 2), rec)
            for i, (text, (s, e), rec) in enumerate(zip(sentences, placed, records))]


def _heard_words(checker: Checker, audio16: np.ndarray, language: str) -> list[tuple[str, float, float]]:
    model = checker.listener.model
    segments, _info = model.transcribe(audio16, language=whisper_language(language), beam_size=1,
                                       word_timestamps=True, condition_on_previous_text=False, vad_filter=False)
    out = []
    for seg in segments:
        for w in seg.words or []:
            out += [(t, float(w.start), float(w.end)) for t in normalize_words(w.word, language)]
    return out


def _locate(sentences: list[str], heard: list[tuple[str, float, float]], total: float,
            language: str) -> list[tuple[float, float]]:
    owner: list[int] = []
    expected: list[str] = []
    for k, text in enumerate(sentences):
        words = normalize_words(text, language)
        expected += words
        owner += [k] * len(words)
    matcher = difflib.SequenceMatcher(None, expected, [h[0] for h in heard], autojunk=False)
    times: list[list[float]] = [[] for _ in sentences]
    for block in matcher.get_matching_blocks():
        for d in range(block.size):
            _, start, end = heard[block.b + d]
            times[owner[block.a + d]] += [start, end]
    spans: list[tuple[float, float] | None] = [(min(t), max(t)) if t else None for t in times]
    out: list[tuple[float, float]] = []
    for k, span in enumerate(spans):
        if span is not None:
            out.append(span)
            continue
        prev_end = out[-1][1] if out else 0.0
        nxt = next((s[0] for s in spans[k + 1:] if s is not None), total)
        out.append((prev_end, max(prev_end, nxt)))
    return out
