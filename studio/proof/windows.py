"""Whisper's windows: sentences laid end to end into them, heard by the model's workers, and the
heard words shared back among the sentences.

Why windows: Whisper's encoder always looks at 30 s of audio, so one short sentence costs as
much as a window full of them (measured on the loaded 2-core machine: one 4 s sentence 2.1 s,
six sentences in 22 s 2.6 s).
"""

from __future__ import annotations

import itertools
import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from studio.proof.words import Region, align_words, edit_distance, normalize_words

RATE = 16_000  # the recogniser's sample rate
WINDOW_S = 28.0
GAP_S = 0.4
FILLING = 3  # windows filling at once (:class:`Packer`)
FULL_S = 1.0  # a window with less room than this left is full
IDLE_S = 5.0  # a worker with nothing to hear for this long ends (another starts with the next window)


@dataclass
class Item:
    """One sentence on its way through a window (16 kHz audio)."""

    index: int
    audio: np.ndarray
    text: str
    offset: float = 0.0  # where it starts in its window (seconds)
    again: bool = False  # the decoder stopped before its end, or heard less than half of it, among other sentences


class Packer:
    """Sentences laid end to end into windows of at most ``WINDOW_S`` (gaps included), each sentence
    into the first of a few filling windows it fits.

    Why several windows fill at once: end to end, a sentence that did not fit closed the window
    with up to its own length unused (21 s of 28 on average over a novel's chapter), and Whisper
    encodes and decodes a whole window whatever it holds.
    """

    def __init__(self, filling: int = FILLING) -> None:
        self.filling = filling
        self._open: list[tuple[list[Item], float]] = []  # each window's sentences and seconds used

    def add(self, item: Item) -> list[list[Item]]:
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

    def close(self) -> list[list[Item]]:
        """The windows still filling."""
        windows, self._open = [window for window, _ in self._open], []
        return windows


class Workers:
    """Threads that hear windows, the oldest hearing's first, and up to ``batch`` waiting windows of one
    hearing at once.

    Why not a plain thread pool: the proof of a book goes batch after batch, the next batch's
    first pass running while the workers hear this one's windows. A sentence of this batch that
    must be heard again goes ahead of the next batch's windows, so this batch's verdicts come
    before the next batch's windows are all heard, while both cores keep working.

    Why several windows in one call: greedy decoding reads the whole decoder for every token,
    so two windows decoded together cost little more per token than one.
    """

    def __init__(self, count: int, hear: Callable[[Any, list[list[Item]]], None], batch: int = 1) -> None:
        self.count, self.batch = count, batch
        self._hear = hear  # (hearing, windows): hears the windows
        self._queue: queue.PriorityQueue[tuple[int, int, Future, Any, list[Item]]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, rank: int, hearing: Any, window: list[Item]) -> Future[None]:
        """Hear ``window`` once every waiting window of a lower ``rank`` has started."""
        future: Future[None] = Future()
        self._queue.put((rank, next(self._order), future, hearing, window))
        with self._lock:
            while len(self._threads) < self.count:
                thread = threading.Thread(target=self._serve, name="proof-window", daemon=True)
                self._threads.append(thread)
                thread.start()
        return future

    def _serve(self) -> None:
        """Hear windows until none has come for ``IDLE_S``: a worker left waiting would keep the
        listener, and its model, alive after the checker is dropped."""
        while True:
            try:
                job = self._queue.get(timeout=IDLE_S)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._threads.remove(threading.current_thread())
                        return
                continue
            jobs = [job] if job[2].set_running_or_notify_cancel() else []
            while len(jobs) < self.batch and jobs:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more[3] is not job[3]:
                    self._queue.put(more)
                    break
                if more[2].set_running_or_notify_cancel():
                    jobs.append(more)
            if not jobs:
                continue
            try:
                self._hear(job[3], [j[4] for j in jobs])
            except BaseException as error:  # handed to whoever waits for the windows
                for j in jobs:
                    j[2].set_exception(error)
            else:
                for j in jobs:
                    j[2].set_result(None)


def owners(words: list[dict], expected: list[list[Any]], spans: list[tuple[float, float]], lang: str) -> list[int]:
    """The sentence each heard word of a window belongs to (``expected``: each sentence's words,
    with a ``text``; ``spans``: each sentence's seconds in the window).

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
