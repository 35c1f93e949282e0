"""The recogniser's ears: what was heard, and how well the expected words fit the audio.

Why sentences are packed into windows: Whisper's encoder always looks at 30 s of
audio, so one short sentence costs as much as a window full of them (measured on
the loaded 2-core machine: one 4 s sentence 2.1 s, six sentences in 22 s 2.6 s).
Sentences of one language are laid end to end with a short gap until about 28 s
are full, encoded once, then

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
full by one of the model's workers (two on a CPU with two cores: :func:`studio.proof.model.cpu_workers`).

Words are given back per sentence, with times relative to the sentence's own audio.
A sentence longer than a window goes through faster-whisper's own long-form
transcription (heard words only; its expected words then carry no score).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from studio.core.language import language_family
from studio.proof.sphinx import FirstPass, aligner
from studio.proof.words import Region, align_words, edit_distance, normalize_words

log = logging.getLogger(__name__)

RATE = 16_000
WINDOW_S = 28.0
GAP_S = 0.4
MAX_FRAMES = 3000
FILLING = 3  # windows filling at once (:class:`_Packer`)
FULL_S = 1.0  # a window with less room than this left is full
STOPPED_S = 1.0  # a sentence whose audio goes on this long after the window's last heard word: heard again
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


@dataclass
class _Item:
    index: int
    audio: np.ndarray
    text: str
    offset: float = 0.0
    again: bool = False  # the decoder stopped before its end, or heard less than half of it, among other sentences


class _Packer:
    """Sentences laid end to end into windows of at most ``WINDOW_S`` (gaps included), each sentence
    into the first of a few filling windows it fits.

    Why several windows fill at once: end to end, a sentence that did not fit closed the window
    with up to its own length unused (21 s of 28 on average over a novel's chapter), and Whisper
    encodes and decodes a whole window whatever it holds.
    """

    def __init__(self, filling: int = FILLING) -> None:
        self.filling = filling
        self._open: list[tuple[list[_Item], float]] = []  # each window's sentences and seconds used

    def add(self, item: _Item) -> list[list[_Item]]:
        """Place ``item``; the windows closed by it (full, or the fullest when too many are filling)."""
        seconds = len(item.audio) / RATE
        for k, (window, used) in enumerate(self._open):
            if used + GAP_S + seconds <= WINDOW_S:
                window.append(item)
                self._open[k] = (window, used + GAP_S + seconds)
                return [self._open.pop(k)[0]] if WINDOW_S - self._open[k][1] < FULL_S else []
        self._open.append(([item], seconds))
        if len(self._open) > self.filling:
            return [self._open.pop(max(range(len(self._open) - 1), key=lambda k: self._open[k][1]))[0]]
        return []

    def close(self) -> list[list[_Item]]:
        """The windows still filling."""
        windows, self._open = [window for window, _ in self._open], []
        return windows


class _Windows:
    """Windows heard by the model's workers side by side; leaving the block waits for every one
    and raises the first failure (a failure in the block cancels what has not started)."""

    def __init__(self, listener: Listener, tok: Any, lang: str, out: list[Heard | None]) -> None:
        self._listener, self._tok, self._lang, self._out = listener, tok, lang, out
        self._pool = ThreadPoolExecutor(max_workers=listener.workers, thread_name_prefix="proof-window")
        self._heard: list[Future[None]] = []

    def submit(self, windows: list[list[_Item]]) -> None:
        for window in windows:
            self._heard.append(self._pool.submit(self._listener._transcribe, self._tok, [window], self._lang,
                                                 self._out))

    def __enter__(self) -> _Windows:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: Any) -> None:
        self._pool.shutdown(wait=True, cancel_futures=kind is not None)
        if kind is None:
            for heard in self._heard:
                heard.result()


class Listener:
    """Listens with one loaded faster-whisper model (see :func:`studio.proof.model.load_model`)."""

    def __init__(self, model: Any, first_pass: FirstPass | None = FIRST_PASS) -> None:
        self.model = model
        self.first_pass = first_pass  # None: every sentence transcribed
        self._tokenizers: dict[str, Any] = {}
        self._spoken: dict[int, bool] = {}  # token id: it writes a letter or digit (not only punctuation)
        self.decoded = 0  # sentences Whisper transcribed
        self.trusted = 0  # sentences the first pass trusted (never sent to Whisper)
        self._count = threading.Lock()  # the workers count what they decoded
        #: one window encoded at a time: the encoder's activations are the largest, and two at once took the
        #: peak 60 MiB up at the same speed (the other worker decodes meanwhile)
        self._encoding = threading.Lock()
        #: windows heard side by side: the model's CTranslate2 workers (:func:`studio.proof.model.cpu_workers`)
        self.workers = max(1, int(getattr(getattr(model, "model", None), "num_workers", 1)))
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
        tok = self.tokenizer(lang)
        out: list[Heard | None] = [None] * len(audios)
        self._texts = texts
        items: list[_Item] = []
        for i, (audio, text) in enumerate(zip(audios, texts)):
            if len(audio) / RATE > WINDOW_S:
                out[i] = self._long(audio, text, lang)
            else:
                items.append(_Item(i, audio, text))
        suspects = items
        if self.first_pass is not None and lang == "en":  # pocketsphinx's model is US English
            suspects = self._first_pass(items, tok, lang, out)
        else:
            self._hear(suspects, tok, lang, out)
        while suspects:
            # the decoder can stop early in a window (after a chapter title and its pause it wrote "Chapter 1."
            # and nothing of the eight sentences after it; or "And what" of "And what are we to do without the
            # money?"): what it left unheard, stopped in or half heard is heard again away from that window
            again = [_Item(it.index, it.audio, it.text) for it in suspects if it.again]
            suspects = again if len(again) < len(suspects) else []
            self._hear(suspects, tok, lang, out)
        return [h if h is not None else Heard((), (), "") for h in out]

    def _hear(self, items: list[_Item], tok: Any, lang: str, out: list[Heard | None]) -> None:
        packer = _Packer()
        with _Windows(self, tok, lang, out) as windows:
            for item in items:
                windows.submit(packer.add(item))
            windows.submit(packer.close())

    def _first_pass(self, items: list[_Item], tok: Any, lang: str, out: list[Heard | None]) -> list[_Item]:
        """The first pass over ``items``; Whisper hears the doubted ones. Returns the doubted items.

        Why each window is heard as soon as it is full: pocketsphinx holds Python's lock while it
        aligns and CTranslate2 lets it go while it encodes and decodes, so the model's workers hear
        the doubted sentences while the first pass goes on through the next ones.
        """
        assert self.first_pass is not None
        suspects: list[_Item] = []
        packer = _Packer()
        with _Windows(self, tok, lang, out) as windows:
            for item in items:
                fit = aligner().fit(item.audio, normalize_words(item.text, "en"))
                if self.first_pass.trusts(fit):
                    words = tuple(Word(w.text, w.start, w.end, None) for w in fit.words)
                    out[item.index] = Heard(words, words, item.text.strip(), False)
                    self.trusted += 1
                    continue
                suspects.append(item)
                windows.submit(packer.add(item))
            windows.submit(packer.close())
        return suspects

    def _encode(self, batch: list[list[_Item]]) -> tuple[Any, list[int]]:
        """The windows' audio laid out (each item's ``offset`` set) and encoded together."""
        gap = np.zeros(int(GAP_S * RATE), np.float32)
        feats, frames = [], []
        for window in batch:
            parts: list[np.ndarray] = []
            pos = 0
            for item in window:
                item.offset = pos / RATE
                parts += [item.audio.astype(np.float32), gap]
                pos += len(item.audio) + len(gap)
            features = self.model.feature_extractor(np.concatenate(parts))
            frames.append(min(int(features.shape[-1]), MAX_FRAMES))
            feats.append(np.pad(features, ((0, 0), (0, max(0, MAX_FRAMES - features.shape[-1]))))[:, :MAX_FRAMES])
        with self._encoding:
            return self.model.encode(np.stack(feats).astype(np.float32)), frames

    def _expected(self, tok: Any, batch: list[list[_Item]], ids: list[list[list[int]]], encoded: Any,
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

    def _transcribe(self, tok: Any, batch: list[list[_Item]], lang: str, out: list[Heard | None]) -> None:
        """Free transcription of the windows' sentences (and their expected words' forced scores)."""
        encoded, frames = self._encode(batch)
        ids = [[self.encode(tok, " " + item.text.strip()) for item in window] for window in batch]
        expected = self._expected(tok, batch, ids, encoded, frames)
        prompts = [self._prompt(tok, window) for window in batch]
        # what the window should say, and room for a misreading: a decoder caught in a loop ("a little bit
        # more than a little bit more ...") stops there, not at Whisper's 448 tokens (the limit counts the prompt)
        said = max(sum(len(i) for i in window) for window in ids)
        length = min(448, max(len(p) for p in prompts) + int(SAID_ROOM * said) + 16)
        results = self.model.model.generate(encoded, prompts, beam_size=1, max_length=length,
                                            suppress_blank=True, suppress_tokens=[-1])
        tokens = [[t for t in r.sequences_ids[0] if t < tok.eot] for r in results]
        heard = self._align(tok, tokens, encoded, frames)
        for window, mine, words in zip(batch, expected, heard):
            spans = [(it.offset, it.offset + len(it.audio) / RATE) for it in window]
            owner = _owners(words, mine, spans, lang)
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

    def _align(self, tok: Any, tokens: list[list[int]], encoded: Any, frames: list[int]) -> list[list[dict]]:
        """Forced alignment of token lists, one per window: word times, mean and least token probability.

        faster-whisper's ``find_alignment`` for a batch, keeping each word's weakest token.
        """
        filler = tok.encode(" .")  # a window with nothing heard still needs a sequence in the batch
        results = self.model.model.align(encoded, tok.sot_sequence, [t or filler for t in tokens], frames,
                                         median_filter_width=7)
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
        with self._count:
            self.decoded += 1
        return Heard(tuple(_normalised(words, 0.0, lang)), tuple(expected), "".join(w["word"] for w in words).strip())


def _owners(words: list[dict], expected: list[list[Word]], spans: list[tuple[float, float]], lang: str) -> list[int]:
    """The sentence each heard word of a window belongs to.

    Why not by time alone: a short heading's words are timed at the edge of its audio, and one
    timed a little early went to the sentence before ("Index entries" heard as "entries" and the
    title before it as "... the Good Index Index": a heading garbled, a title repeated). A heard
    word the word alignment pairs with an expected word goes to that word's sentence, and so do
    the words of a differing stretch within one sentence. Time decides what differs across a
    boundary, and a heard word at a boundary that repeats the sentence before it stays there.
    """
    owner = [_owner((float(w["start"]) + float(w["end"])) / 2, spans) for w in words]
    sentence = [k for k, mine in enumerate(expected) for _ in mine]
    texts = [w.text for mine in expected for w in mine]
    heard: list[str] = []
    raw: list[int] = []  # the heard word each normalised one came from
    for i, w in enumerate(words):
        for text in normalize_words(w["word"], lang):
            heard.append(text)
            raw.append(i)
    regions = align_words(texts, heard) + [Region(len(texts), len(texts), len(heard), len(heard))]
    e = h = 0
    for region in regions:
        for d in range(region.e0 - e):  # the words both sides agree on
            owner[raw[h + d]] = sentence[e + d]
        inside = set(sentence[region.e0:region.e1])
        if len(inside) > 1 and region.h1 > region.h0:
            groups = sorted(inside)
            split = _split([" ".join(t for t, k in zip(texts[region.e0:region.e1], sentence[region.e0:region.e1])
                                     if k == g) for g in groups], heard[region.h0:region.h1])
            for j, g in zip(range(region.h0, region.h1), split):
                owner[raw[j]] = groups[g]
        elif len(inside) == 1:
            k = inside.pop()
            before = set(texts[max(0, region.e0 - 3):region.e0]) if region.e0 and sentence[region.e0 - 1] != k else set()
            for j in range(region.h0, region.h1):
                if heard[j] in before and owner[raw[j]] == k - 1:
                    continue  # the sentence before said its last word again
                before = set()
                owner[raw[j]] = k
        e, h = region.e1, region.h1
    return owner


def _split(expected: list[str], heard: list[str]) -> list[int]:
    """Heard words shared out in order among the sentences of a stretch that differs across a
    boundary: the shares whose letters are closest to each sentence's expected words."""
    n, m = len(expected), len(heard)
    cost = {(0, 0): (0.0, [])}
    for g in range(n):
        nxt: dict[tuple[int, int], tuple[float, list[int]]] = {}
        for (_, used), (c, path) in cost.items():
            ends = [m] if g == n - 1 else range(used, m + 1)
            for end in ends:
                d = edit_distance(expected[g], " ".join(heard[used:end]))
                if (g + 1, end) not in nxt or c + d < nxt[(g + 1, end)][0]:
                    nxt[(g + 1, end)] = (c + d, path + [g] * (end - used))
        cost = nxt
    return cost[(n, m)][1]


def _owner(t: float, spans: list[tuple[float, float]]) -> int:
    """The sentence a heard word belongs to: the one whose audio holds its middle (or the nearest)."""
    best, dist = 0, float("inf")
    for k, (a, b) in enumerate(spans):
        d = 0.0 if a <= t <= b else min(abs(t - a), abs(t - b))
        if d < dist:
            best, dist = k, d
    return best


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
