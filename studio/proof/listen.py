"""The recogniser's ears: what was heard, and how well the expected words fit the audio.

Why sentences are packed into windows: Whisper's encoder always looks at 30 s of
audio, so one short sentence costs as much as a window full of them (measured on
the loaded 2-core machine: one 4 s sentence 2.1 s, six sentences in 22 s 2.6 s).
Sentences of one language are laid end to end with a short gap until about 28 s
are full, encoded once, then

* decoded greedily (free transcription, the "heard" words), and
* forced-scored twice with CTranslate2's ``align``: the heard tokens (their word
  times and probabilities, as faster-whisper computes them) and the *expected*
  tokens -- the probability of each expected word given the audio, without any
  decoding. A word the voice said that the recogniser wrote differently still
  scores well; a word the voice never said scores near zero.

Words are given back per sentence, with times relative to the sentence's own audio.
A sentence longer than a window goes through faster-whisper's own long-form
transcription (heard words only; its expected words then carry no score).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from studio.core.language import language_family
from studio.proof.words import normalize_words

log = logging.getLogger(__name__)

RATE = 16_000
WINDOW_S = 28.0
GAP_S = 0.4
MAX_FRAMES = 3000


@dataclass(frozen=True)
class Word:
    """One normalised word with its time (seconds into the sentence) and probability (None: not scored)."""

    text: str
    start: float
    end: float
    probability: float | None


@dataclass(frozen=True)
class Heard:
    """What the recogniser made of one sentence."""

    heard: tuple[Word, ...]
    expected: tuple[Word, ...]
    raw: str  # the heard text as the recogniser wrote it (shown to the producer)


def supported_languages() -> frozenset[str]:
    from faster_whisper.tokenizer import _LANGUAGE_CODES

    return frozenset(_LANGUAGE_CODES)


def whisper_language(language: str) -> str | None:
    """The recogniser's code for a sentence language, or None when it cannot listen in it."""
    family = language_family(language) or ""
    if family in ("nb", "nn"):
        family = "no"
    return family if family in supported_languages() else None


@dataclass
class _Item:
    index: int
    audio: np.ndarray
    text: str
    offset: float = 0.0


class Listener:
    """Listens with one loaded faster-whisper model (see :func:`studio.proof.model.load_model`)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self._tokenizers: dict[str, Any] = {}
        self.decoded = 0  # sentences transcribed
        self.canonical_tokens = True  # False: the tokenizer's own split (the listener before issue 30, measured)
        #: the book's words as the decoder's prompt (:mod:`studio.proof.vocabulary`); None: no prompt
        self.vocabulary: Any = None
        self._texts: Sequence[str] = ()

    def tokenizer(self, language: str) -> Any:
        if language not in self._tokenizers:
            from faster_whisper.tokenizer import Tokenizer

            self._tokenizers[language] = Tokenizer(self.model.hf_tokenizer, self.model.model.is_multilingual,
                                                   task="transcribe", language=language)
        return self._tokenizers[language]

    def encode(self, tok: Any, text: str) -> list[int]:
        """The text's tokens as the decoder itself writes them.

        Why not the tokenizer's own output: the embedded model's ``tokenizer.json``
        splits some common words after a space into a bare space token and the word
        (" the" as " " + "the"), a sequence the decoder never writes, so its forced
        probability was near zero in clean audio. Such pairs are joined into the one
        token the vocabulary has for them.
        """
        ids = tok.encode(text)
        if not self.canonical_tokens:
            return ids
        hf = self.model.hf_tokenizer
        space = hf.token_to_id("\u0120")
        out: list[int] = []
        i = 0
        while i < len(ids):
            if ids[i] == space and i + 1 < len(ids):
                joined = hf.token_to_id("\u0120" + (hf.id_to_token(ids[i + 1]) or ""))
                if joined is not None:
                    out.append(joined)
                    i += 2
                    continue
            out.append(ids[i])
            i += 1
        return out

    def listen(self, audios: Sequence[np.ndarray], texts: Sequence[str], language: str) -> list[Heard]:
        """One :class:`Heard` per sentence (16 kHz mono float audio, expected text), in order."""
        lang = whisper_language(language)
        if lang is None:
            raise ValueError(f"the recogniser does not know language {language!r}")
        out: list[Heard | None] = [None] * len(audios)
        self._texts = texts
        window: list[_Item] = []
        used = 0.0
        for i, (audio, text) in enumerate(zip(audios, texts)):
            seconds = len(audio) / RATE
            if seconds > WINDOW_S:
                out[i] = self._long(audio, text, lang)
                continue
            if window and used + GAP_S + seconds > WINDOW_S:
                self._window(window, lang, out)
                window, used = [], 0.0
            window.append(_Item(i, audio, text))
            used += seconds + (GAP_S if len(window) > 1 else 0.0)
        if window:
            self._window(window, lang, out)
        return [h if h is not None else Heard((), (), "") for h in out]

    def _window(self, items: list[_Item], lang: str, out: list[Heard | None]) -> None:
        gap = np.zeros(int(GAP_S * RATE), np.float32)
        parts: list[np.ndarray] = []
        pos = 0
        for item in items:
            item.offset = pos / RATE
            parts += [item.audio.astype(np.float32), gap]
            pos += len(item.audio) + len(gap)
        audio = np.concatenate(parts)
        tok = self.tokenizer(lang)
        features = self.model.feature_extractor(audio)
        frames = min(int(features.shape[-1]), MAX_FRAMES)
        features = np.pad(features, ((0, 0), (0, max(0, MAX_FRAMES - features.shape[-1]))))[:, :MAX_FRAMES]
        encoded = self.model.encode(features)
        ids = [self.encode(tok, " " + item.text.strip()) for item in items]
        counts = [len(tok.split_to_word_tokens(i + [tok.eot])[0]) - 1 for i in ids]
        expected_tokens = [t for i in ids for t in i]
        forced = self.model.find_alignment(tok, [expected_tokens], encoded, frames)[0] if expected_tokens else []
        spans = [(it.offset, it.offset + len(it.audio) / RATE) for it in items]
        mine: list[list[dict]] = []
        at = 0
        for n in counts:
            mine.append(forced[at:at + n])
            at += n
        result = self.model.model.generate(encoded, [self._prompt(tok, items)], beam_size=1,
                                           max_length=448, suppress_blank=True, suppress_tokens=[-1])
        heard_tokens = [t for t in result[0].sequences_ids[0] if t < tok.eot]
        heard = self.model.find_alignment(tok, [heard_tokens], encoded, frames)[0] if heard_tokens else []
        owner = [_owner((float(w["start"]) + float(w["end"])) / 2, spans) for w in heard]
        self.decoded += len(items)
        for k, item in enumerate(items):
            words = [w for w, o in zip(heard, owner) if o == k]
            out[item.index] = Heard(
                heard=tuple(_normalised(words, item.offset, lang)),
                expected=tuple(_normalised(mine[k], item.offset, lang)),
                raw="".join(w["word"] for w in words).strip(),
            )

    def _prompt(self, tok: Any, items: list[_Item]) -> list[int]:
        """The decoder's start, after the book's vocabulary and the sentence before as its prompt when set."""
        start = list(tok.sot_sequence) + [tok.no_timestamps]
        if self.vocabulary is None:
            return start
        before = self._texts[items[0].index - 1] if items[0].index else ""
        text = self.vocabulary.prompt([item.text for item in items], before)
        # Whisper's limit for a prompt: half the 448-token context, less one
        return [tok.sot_prev] + tok.encode(" " + text)[-223:] + start if text else start

    def _long(self, audio: np.ndarray, text: str, lang: str) -> Heard:
        segments, _info = self.model.transcribe(audio, language=lang, beam_size=1, word_timestamps=True,
                                                condition_on_previous_text=False, vad_filter=False)
        words = [{"word": w.word, "start": w.start, "end": w.end, "probability": w.probability}
                 for s in segments for w in (s.words or [])]
        expected = [Word(w, 0.0, 0.0, None) for w in normalize_words(text, lang)]
        return Heard(tuple(_normalised(words, 0.0, lang)), tuple(expected), "".join(w["word"] for w in words).strip())


def _owner(t: float, spans: list[tuple[float, float]]) -> int:
    """The sentence a heard word belongs to: the one whose audio holds its middle (or the nearest)."""
    best, dist = 0, float("inf")
    for k, (a, b) in enumerate(spans):
        d = 0.0 if a <= t <= b else min(abs(t - a), abs(t - b))
        if d < dist:
            best, dist = k, d
    return best


def _normalised(words: list[dict], offset: float, lang: str) -> list[Word]:
    out: list[Word] = []
    carry = ""  # a currency sign the recogniser wrote as a word of its own ("$", "3,786,830")
    for w in words:
        if w["word"].strip() in ("$", "\u00a3", "\u20ac"):
            carry = w["word"].strip()
            continue
        if carry:
            w = {**w, "word": carry + w["word"].strip()}
            carry = ""
        prob = w.get("probability")
        for text in normalize_words(w["word"], lang):
            out.append(Word(text, float(w["start"]) - offset, float(w["end"]) - offset,
                            None if prob is None else float(prob)))
    return out
