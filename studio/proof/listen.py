"""The recogniser's ears: what was heard, and how well the expected words fit the audio.

Sentences of one language are laid end to end into windows of about 28 s
(:mod:`studio.proof.windows`), each encoded once, then

* forced-scored with CTranslate2's ``align``: the probability of each *expected*
  token given the audio, without any decoding. A word the voice said that the
  recogniser would write differently still scores well; a word the voice never
  said scores near zero (each word keeps its weakest spoken token: one nil token
  in a long word is what a changed or missing word leaves);
* decoded greedily (free transcription, the "heard" words) and the heard tokens
  forced-scored too (their word times and probabilities).

Before any of that, a cheap first pass (:class:`studio.proof.sphinx.FirstPass`, pocketsphinx's forced
alignment on one core, :mod:`studio.proof.sphinx`) scores each English sentence's
expected words; a sentence whose every word fits is "heard as written"
(:attr:`Heard.decoded` False, counted in :attr:`Listener.trusted`) and never reaches
Whisper, the others are packed into windows as above, and each window is heard as soon as it is
full by one of the model's workers (two on a CPU with two cores: :func:`studio.proof.model.cpu_workers`),
the windows of an earlier :class:`Hearing` first. A word the first pass hears said more than once
rides along with what Whisper heard (:attr:`Heard.repeated`).

Words are given back per sentence, with times relative to the sentence's own audio.
A sentence longer than a window goes through faster-whisper's own long-form
transcription (heard words only; its expected words then carry no score).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from studio.core.language import language_family
from studio.proof.sphinx import FirstPass, Fit, Repeat
from studio.proof.windows import GAP_S, RATE, WINDOW_S, Item, Packer, Workers, owners
from studio.proof.words import normalize_words

log = logging.getLogger(__name__)

MAX_FRAMES = 3000
STOPPED_S = 1.0  # a sentence whose audio goes on this long after the window's last heard word: heard again
TOGETHER = 2  # waiting windows of one hearing a worker hears in one call (four left the other worker idle)
SAID_ROOM = 1.5  # a window is decoded to at most this many times its expected tokens (and 16 more)


@dataclass(frozen=True)
class Word:
    """One normalised word with its time (seconds into the sentence) and probability (None: not scored)."""

    text: str
    start: float
    end: float
    probability: float | None
    weakest: float | None = None  # the word's least likely spoken token (punctuation left out)


@dataclass(frozen=True)
class Heard:
    """What the recogniser made of one sentence."""

    heard: tuple[Word, ...]
    expected: tuple[Word, ...]
    raw: str  # the heard text as the recogniser wrote it (shown to the producer)
    decoded: bool = True  # False: the expected words fit the audio, the sentence was not transcribed
    repeated: Repeat | None = None  # a word the first pass hears said more than once, whatever Whisper wrote
    foreign: bool = False  # the first pass hears the whole sentence unlike English (:meth:`FirstPass.foreign`)


#: the listener's default first pass (None: every sentence transcribed by Whisper)
FIRST_PASS: FirstPass | None = FirstPass()


def supported_languages() -> frozenset[str]:
    from faster_whisper.tokenizer import _LANGUAGE_CODES

    return frozenset(_LANGUAGE_CODES)


def whisper_language(language: str) -> str | None:
    """The recogniser's code for a sentence language, or None when it cannot listen in it."""
    family = language_family(language) or ""
    if family in ("nb", "nn"):
        family = "no"
    return family if family in supported_languages() else None


def with_first_pass(heard: Heard, fit: Fit, first_pass: FirstPass) -> Heard:
    """What Whisper heard, with what the first pass hears in the same sentence (a word said again,
    another language's rules)."""
    return dataclasses.replace(heard, repeated=first_pass.repeated(fit), foreign=first_pass.foreign(fit))


class Hearing:
    """Sentences being heard (:meth:`Listener.begin`): what is heard so far, and the windows out with
    the model's workers."""

    def __init__(self, listener: Listener, lang: str, texts: Sequence[str], rank: int) -> None:
        self.listener, self.lang, self.texts, self.rank = listener, lang, texts, rank
        self.out: list[Heard | None] = [None] * len(texts)
        self.suspects: list[Item] = []  # the sentences sent to Whisper
        self.fits: dict[int, Fit] = {}  # the first pass's alignments of the sentences it doubts
        self._windows: list[Future[None]] = []

    @property
    def tok(self) -> Any:
        """The recogniser's tokenizer for this hearing's language (asked by the workers: the model may
        still be loading while the first pass begins)."""
        return self.listener.tokenizer(self.lang)

    def submit(self, windows: list[list[Item]]) -> None:
        for window in windows:
            self._windows.append(self.listener._pool.submit(self.rank, self, window))

    def hear(self, items: list[Item]) -> None:
        """``items`` packed into windows and sent to the workers."""
        packer = Packer()
        for item in items:
            self.submit(packer.add(item))
        self.submit(packer.close())
        self.suspects = items

    def cancel(self) -> None:
        for window in self._windows:
            window.cancel()

    def _wait(self) -> None:
        """Every window heard; the first failure raised (what has not started is cancelled)."""
        try:
            for window in self._windows:
                window.result()
        except BaseException:
            self.cancel()
            raise
        self._windows = []

    def heard(self, settled: Callable[[list[int], list[Heard]], None] | None = None) -> list[Heard]:
        """One :class:`Heard` per sentence, in order, once every window is heard.

        ``settled``: told of the sentences whose hearing is final (their indices, what was heard) while
        the workers still hear others again, so that the caller judges them meanwhile.
        """
        self._wait()
        told: set[int] = set()
        suspects = self.suspects
        while suspects:
            # the decoder can stop early in a window (after a chapter title and its pause it wrote "Chapter 1."
            # and nothing of the eight sentences after it; or "And what" of "And what are we to do without the
            # money?"): what it left unheard, stopped in or half heard is heard again away from that window
            again = [Item(it.index, it.audio, it.text) for it in suspects if it.again]
            log.debug("heard again: %d of %d sentences", len(again), len(suspects))
            suspects = again if len(again) < len(suspects) else []
            self.hear(suspects)
            self._tell(settled, told, {it.index for it in suspects})
            self._wait()
        self._tell(settled, told, set())
        return [self._final(i) for i in range(len(self.out))]

    def _tell(self, settled: Callable[[list[int], list[Heard]], None] | None, told: set[int],
              pending: set[int]) -> None:
        ready = [i for i in range(len(self.out)) if i not in told and i not in pending]
        told.update(ready)
        if settled is not None and ready:
            settled(ready, [self._final(i) for i in ready])

    def _final(self, i: int) -> Heard:
        heard = self.out[i] or Heard((), (), "")
        first_pass = self.listener.first_pass
        return with_first_pass(heard, self.fits[i], first_pass) if i in self.fits and first_pass is not None else heard


class Listener:
    """Listens with one faster-whisper model (:func:`studio.proof.model.load_model`), or with one still
    loading (:func:`~studio.proof.model.load_model_later`: the first pass needs no model)."""

    def __init__(self, model: Any, first_pass: FirstPass | None = FIRST_PASS, workers: int = 0) -> None:
        self._model = model  # or its Future
        self.first_pass = first_pass  # None: every sentence transcribed
        self._tokenizers: dict[str, Any] = {}
        self._spoken: dict[int, bool] = {}  # token id: it writes a letter or digit (not only punctuation)
        self.decoded = 0  # sentences Whisper transcribed
        self.trusted = 0  # sentences the first pass trusted (never sent to Whisper)
        self._count = threading.Lock()  # the workers count what they decoded
        self._tokenizing = threading.Lock()
        #: one window encoded at a time: the encoder's activations are the largest, and two at once took the
        #: peak 60 MiB up at the same speed (the other worker decodes meanwhile)
        self._encoding = threading.Lock()
        #: windows heard side by side: the model's CTranslate2 workers (:func:`studio.proof.model.cpu_workers`)
        self.workers = workers or max(1, int(getattr(getattr(model, "model", None), "num_workers", 1)))
        self.canonical_tokens = True  # False: the tokenizer's own split (the listener before issue 30, measured)
        #: the book's words as the decoder's prompt (:mod:`studio.proof.vocabulary`); None: no prompt
        self.vocabulary: Any = None
        self._pool = Workers(self.workers, self._transcribe, TOGETHER)
        self._hearings = itertools.count()  # each hearing's rank among the workers' jobs: older first

    @property
    def model(self) -> Any:
        """The loaded recogniser, waited for while it still loads (its load error raised here)."""
        if isinstance(self._model, Future):
            self._model = self._model.result()
        return self._model

    def tokenizer(self, language: str) -> Any:
        with self._tokenizing:  # the workers ask for it too
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

    def begin(self, audios: Sequence[np.ndarray], texts: Sequence[str], language: str) -> Hearing:
        """Start hearing the sentences (16 kHz mono float audio, expected text): the first pass runs
        here, in the calling thread, and the windows of the sentences it doubts go to the model's
        workers as they fill.

        Why apart from :meth:`Hearing.heard`: a caller with more sentences to come (the next
        chapter) begins them while the workers still hear these.
        """
        lang = whisper_language(language)
        if lang is None:
            raise ValueError(f"the recogniser does not know language {language!r}")
        hearing = Hearing(self, lang, texts, next(self._hearings))
        items: list[Item] = []
        for i, (audio, text) in enumerate(zip(audios, texts)):
            if len(audio) / RATE > WINDOW_S:
                hearing.out[i] = self._long(audio, text, lang)
            else:
                items.append(Item(i, audio, text))
        try:
            if self.first_pass is not None and lang == "en":  # pocketsphinx's model is US English
                hearing.suspects = self._first_pass(items, hearing)
            else:
                hearing.hear(items)
        except BaseException:
            hearing.cancel()
            raise
        return hearing

    def _first_pass(self, items: list[Item], hearing: Hearing) -> list[Item]:
        """The first pass over ``items``; Whisper hears the doubted ones. Returns the doubted items.

        Why each window is heard as soon as it is full: pocketsphinx holds Python's lock while it
        aligns and CTranslate2 lets it go while it encodes and decodes, so the model's workers hear
        the doubted sentences while the first pass goes on through the next ones.
        """
        assert self.first_pass is not None
        suspects: list[Item] = []
        packer = Packer()
        for item in items:
            fit = self.first_pass.fit(item.audio, normalize_words(item.text, "en"))
            if self.first_pass.trusts(fit):
                words = tuple(Word(w.text, w.start, w.end, None) for w in fit.words)
                hearing.out[item.index] = Heard(words, words, item.text.strip(), False)
                self.trusted += 1
                continue
            hearing.fits[item.index] = fit
            suspects.append(item)
            hearing.submit(packer.add(item))
        hearing.submit(packer.close())
        return suspects

    def _encode(self, batch: list[list[Item]]) -> tuple[list[Any], list[int]]:
        """The windows' audio laid out (each item's ``offset`` set) and encoded, one window at a time
        (two at once took the encoder's peak up by their attention)."""
        gap = np.zeros(int(GAP_S * RATE), np.float32)
        encoded, frames = [], []
        for window in batch:
            parts: list[np.ndarray] = []
            pos = 0
            for item in window:
                item.offset = pos / RATE
                parts += [item.audio.astype(np.float32), gap]
                pos += len(item.audio) + len(gap)
            features = self.model.feature_extractor(np.concatenate(parts))
            frames.append(min(int(features.shape[-1]), MAX_FRAMES))
            features = np.pad(features, ((0, 0), (0, max(0, MAX_FRAMES - features.shape[-1]))))[:, :MAX_FRAMES]
            with self._encoding:
                encoded.append(self.model.encode(features[None].astype(np.float32)))
        return encoded, frames

    def _expected(self, tok: Any, batch: list[list[Item]], ids: list[list[list[int]]], encoded: list[Any],
                  frames: list[int]) -> list[list[list[Word]]]:
        """Each item's expected words (``ids``: its tokens) forced onto the audio (times relative to the item)."""
        forced = self._align(tok, [[t for i in window for t in i] for window in ids], encoded, frames)
        out = []
        for window, window_ids, words in zip(batch, ids, forced):
            at, mine = 0, []
            for item, i in zip(window, window_ids):
                n = len(tok.split_to_word_tokens(i + [tok.eot])[0]) - 1
                mine.append(_normalised(words[at:at + n], item.offset, tok.language_code))
                at += n
            out.append(mine)
        return out

    def _transcribe(self, hearing: Hearing, batch: list[list[Item]]) -> None:
        """Free transcription of the windows' sentences (and their expected words' forced scores)."""
        tok, lang, out = hearing.tok, hearing.lang, hearing.out
        encoded, frames = self._encode(batch)
        ids = [[self.encode(tok, " " + item.text.strip()) for item in window] for window in batch]
        expected = self._expected(tok, batch, ids, encoded, frames)
        prompts = [self._prompt(tok, window, hearing.texts) for window in batch]
        # what the window should say, and room for a misreading: a decoder caught in a loop ("a little bit
        # more than a little bit more ...") stops there, not at Whisper's 448 tokens (the limit counts the prompt)
        said = max(sum(len(i) for i in window) for window in ids)
        length = min(448, max(len(p) for p in prompts) + int(SAID_ROOM * said) + 16)
        if len(encoded) == 1:
            joined = encoded[0]
        else:
            from ctranslate2 import StorageView

            joined = StorageView.from_array(np.concatenate([np.asarray(e) for e in encoded]))
        results = self.model.model.generate(joined, prompts, beam_size=1, max_length=length,
                                            suppress_blank=True, suppress_tokens=[-1])
        tokens = [[t for t in r.sequences_ids[0] if t < tok.eot] for r in results]
        heard = self._align(tok, tokens, encoded, frames)
        for window, mine, words in zip(batch, expected, heard):
            spans = [(it.offset, it.offset + len(it.audio) / RATE) for it in window]
            owner = owners(words, mine, spans, lang)
            stopped = max((w["end"] for w in words), default=0.0) + STOPPED_S
            with self._count:
                self.decoded += len(window)
            for k, item in enumerate(window):
                own = [w for w, o in zip(words, owner) if o == k]
                heard_k = Heard(heard=tuple(_normalised(own, item.offset, lang)), expected=tuple(mine[k]),
                                raw="".join(w["word"] for w in own).strip())
                out[item.index] = heard_k
                item.again = len(window) > 1 and (spans[k][1] > stopped
                                                  or len(heard_k.heard) * 2 < max(1, len(heard_k.expected)))

    def _align(self, tok: Any, tokens: list[list[int]], encoded: list[Any], frames: list[int]) -> list[list[dict]]:
        """Forced alignment of token lists, one per window: word times, mean and least token probability.

        faster-whisper's ``find_alignment``, window by window on each one's own encoder output (aligned
        together they were no faster), keeping each word's weakest token.
        """
        filler = tok.encode(" .")  # a window with nothing heard still needs a sequence
        results = [self.model.model.align(e, tok.sot_sequence, [t or filler], [n], median_filter_width=7)[0]
                   for e, t, n in zip(encoded, tokens, frames)]
        out: list[list[dict]] = []
        for result, text in zip(results, tokens):
            words, word_tokens = tok.split_to_word_tokens(text + [tok.eot])
            if not text or len(word_tokens) <= 1:
                out.append([])
                continue
            probs = np.asarray(result.text_token_probs)
            pairs = np.asarray(result.alignments)
            jumps = np.pad(np.diff(pairs[:, 0]), (1, 0), constant_values=1).astype(bool)
            times = pairs[:, 1][jumps] / self.model.tokens_per_second
            bounds = np.pad(np.cumsum([len(t) for t in word_tokens[:-1]]), (1, 0))
            out.append([{"word": word, "start": times[i], "end": times[j], "probability": float(np.mean(probs[i:j])),
                         "weakest": self._weakest(tok, text[i:j], probs[i:j])}
                        for word, i, j in zip(words, bounds[:-1], bounds[1:])])
        return out

    def _weakest(self, tok: Any, ids: list[int], probs: np.ndarray) -> float:
        """The least likely token that says something: a quote or a comma the voice does not speak is left out."""
        for t in ids:
            if t not in self._spoken:
                self._spoken[t] = any(c.isalnum() for c in tok.decode([t]))
        spoken = [float(p) for t, p in zip(ids, probs) if self._spoken[t]]
        return min(spoken) if spoken else float(np.min(probs))

    def _prompt(self, tok: Any, items: list[Item], texts: Sequence[str]) -> list[int]:
        """The decoder's start, after the book's vocabulary and the sentence before as its prompt when set."""
        start = list(tok.sot_sequence) + [tok.no_timestamps]
        if self.vocabulary is None:
            return start
        before = texts[items[0].index - 1] if items[0].index else ""
        text = self.vocabulary.prompt([item.text for item in items], before)
        # Whisper's limit for a prompt: half the 448-token context, less one
        return [tok.sot_prev] + tok.encode(" " + text)[-223:] + start if text else start

    def _long(self, audio: np.ndarray, text: str, lang: str) -> Heard:
        segments, _info = self.model.transcribe(audio, language=lang, beam_size=1, word_timestamps=True,
                                                condition_on_previous_text=False, vad_filter=False)
        words = [{"word": w.word, "start": w.start, "end": w.end, "probability": w.probability}
                 for s in segments for w in (s.words or [])]
        expected = [Word(w, 0.0, 0.0, None) for w in normalize_words(text, lang)]
        with self._count:
            self.decoded += 1
        return Heard(tuple(_normalised(words, 0.0, lang)), tuple(expected), "".join(w["word"] for w in words).strip())


def _joined(words: list[dict]) -> list[dict]:
    """A number the recogniser wrote in pieces made one word again ("$", "1", ",928", ",611." as "$1,928,611.").

    Why: "$1" alone reads "one dollars", and the rest of the figure then differs
    from the spoken form "one million ... dollars" in three places.
    """
    out: list[dict] = []
    for w in words:
        text = w["word"].strip()
        prev = out[-1]["word"].strip() if out else ""
        currency = prev in ("$", "\u00a3", "\u20ac")
        if out and (currency or (text[:1] in ",." and text[1:2].isdigit() and prev[-1:].isdigit())):
            probs = [p for p in (out[-1].get("probability"), w.get("probability")) if p is not None]
            weak = [p for p in (out[-1].get("weakest"), w.get("weakest")) if p is not None]
            out[-1] = {**out[-1], "word": out[-1]["word"].rstrip() + text, "end": w["end"],
                       "probability": float(np.mean(probs)) if probs else None,
                       "weakest": min(weak) if weak else None}
        else:
            out.append(dict(w))
    return out


def _normalised(words: list[dict], offset: float, lang: str) -> list[Word]:
    out: list[Word] = []
    for w in _joined(words):
        prob, weakest = w.get("probability"), w.get("weakest")
        for text in normalize_words(w["word"], lang):
            out.append(Word(text, float(w["start"]) - offset, float(w["end"]) - offset,
                            None if prob is None else float(prob), None if weakest is None else float(weakest)))
    return out
