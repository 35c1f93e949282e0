"""The work queue of the streams when their engines decode in windows.

Why a second kind of queue: with whole sentences as the unit of work, the last long
sentence of a batch runs on one core while the other waits, and a paragraph-long
sentence is never faster than one core. With windowed engines
(:mod:`studio.engine.decode_windows`) a sentence is two kinds of job: *encode* (text ->
latent, one job) and *decode* (one job per window). Any stream can decode any
window of any encoded sentence, so one long sentence spreads over all streams.

Order: decode jobs before encode jobs, oldest sentence first. So sentences finish
in about the order they were started (the first audio of a long paragraph is out
after its first windows), and at most about one latent per stream waits in memory.
Encode jobs go longest first, as the whole-sentence queue does. The one exception:
a stream whose decoder is still loading (``bf16-cpu`` imports torch for ~2 s at the
start) takes encode jobs first, so its core encodes the call's sentences ahead
instead of waiting on the first window.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from studio.engine.decode_windows import Latent


@dataclass
class _Sentence:
    latent: Latent
    pieces: list[np.ndarray | None]
    streams: list[int]
    left: int = field(init=False)

    def __post_init__(self) -> None:
        self.left = len(self.pieces)


@dataclass(frozen=True)
class Job:
    """``window`` None: encode sentence ``index``; else decode that window of it."""

    index: int
    window: int | None = None


class WindowJobs:
    """Encode and decode jobs for one call, shared by the stream threads (thread-safe)."""

    def __init__(self, items: Sequence[Sequence[int]]) -> None:
        self._cond = threading.Condition()
        self._encode: deque[int] = deque(sorted(range(len(items)), key=lambda i: len(items[i]), reverse=True))
        self._decode: deque[Job] = deque()
        self._sentences: dict[int, _Sentence] = {}
        self._encoding = 0
        self._stopped = False

    def take(self, encode_first: bool = False) -> Job | None:
        """The next job, waiting while another stream's encode may still bring windows;
        None when there is nothing left (or :meth:`stop` was called).

        ``encode_first``: the caller's decoder is still loading, so an encode job (if
        any is left) before the windows, which would only wait.
        """
        with self._cond:
            while not self._stopped:
                if self._decode and not (encode_first and self._encode):
                    return self._decode.popleft()
                if self._encode:
                    self._encoding += 1
                    return Job(self._encode.popleft())
                if not self._encoding:
                    return None
                self._cond.wait()
            return None

    def encoded(self, index: int, latent: Latent) -> None:
        """Sentence ``index`` has its latent: queue its windows."""
        with self._cond:
            n = len(latent.windows)
            self._sentences[index] = _Sentence(latent, [None] * n, [-1] * n)
            self._decode.extend(Job(index, k) for k in range(n))
            self._encoding -= 1
            self._cond.notify_all()

    def latent(self, index: int) -> Latent:
        """The latent of an encoded sentence (for its decode jobs)."""
        with self._cond:
            return self._sentences[index].latent

    def decoded(self, job: Job, audio: np.ndarray, stream: int) -> tuple[Latent, list[np.ndarray], list[int]] | None:
        """Store one window's audio; the sentence's latent, pieces and streams once all are in."""
        assert job.window is not None
        with self._cond:
            sentence = self._sentences[job.index]
            sentence.pieces[job.window] = audio
            sentence.streams[job.window] = stream
            sentence.left -= 1
            if sentence.left:
                return None
            del self._sentences[job.index]
        return sentence.latent, [p for p in sentence.pieces if p is not None], sentence.streams

    def stop(self) -> None:
        """No more jobs for anyone (a stream failed, or the consumer left)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
