"""Waveform data for a sentence, paragraph or chapter: decimated peaks and sentence spans.

Why peaks and not samples: a chapter is tens of millions of samples; the view
needs two numbers per pixel column. Peaks (min/max per bucket) are computed off
the GUI thread from the verified audio cache, laid out with the project's
pauses exactly as export assembles them, and kept in a small LRU keyed by the
sentences' cache checksums (a new take or an edit changes the key, so a stale
waveform is never shown). The result is a frozen value of plain tuples: no
ndarray travels in a signal.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from studio.audio.assemble import Pauses
from studio.project.bookdb import same_heading
from studio.project.duration import Timing, voice_rate
from studio.project.store import Project
from studio.desktop.snapshot import SentenceNode

#: peak buckets per waveform (the view scales them to its width)
BUCKETS = 1600
CACHE_SIZE = 24


@dataclass(frozen=True)
class SentenceSpan:
    """Where a sentence sits in the waveform (seconds); ``rendered`` False: no audio yet."""

    sentence_id: int
    start: float
    end: float
    rendered: bool
    gap: float = 0.0  # the silence after it (seconds); the handle the producer drags
    own_gap: bool = False  # the producer set it (else the project's pause)


@dataclass(frozen=True)
class WaveformData:
    label: str
    duration: float
    mins: tuple[float, ...]
    maxs: tuple[float, ...]
    spans: tuple[SentenceSpan, ...]

    def span_at(self, seconds: float) -> SentenceSpan | None:
        """The sentence under a time (a click in a pause goes to the sentence before it)."""
        best = None
        for span in self.spans:
            if span.start <= seconds:
                best = span
        return best or (self.spans[0] if self.spans else None)

    def span_of(self, sentence_id: int) -> SentenceSpan | None:
        return next((s for s in self.spans if s.sentence_id == sentence_id), None)


def heading_ids(nodes: Sequence[SentenceNode], titles: Mapping[int, str]) -> set[int]:
    """Sentences export speaks as a chapter's title: a separate title, or a first
    paragraph that only repeats the heading (see ``studio.delivery.export``)."""
    out = {n.id for n in nodes if n.paragraph is None}
    first: dict[int, list[SentenceNode]] = {}
    for n in nodes:
        if n.paragraph == 0:
            first.setdefault(n.chapter, []).append(n)
    for chapter, heading in first.items():
        if not any(n.chapter == chapter and n.paragraph is None for n in nodes) and \
                same_heading(" ".join(n.text for n in heading), titles.get(chapter, "")):
            out |= {n.id for n in heading}
    return out


def pause_after(nodes: Sequence[SentenceNode], i: int, pauses: Pauses, titles: set[int] | None = None) -> float:
    """The silence export puts after sentence ``i`` (none after the last): the title pause
    after a title, the producer's own pause if set, else the sentence or paragraph pause."""
    if i + 1 >= len(nodes):
        return 0.0
    cur, nxt = nodes[i], nodes[i + 1]
    heading = titles or set()
    if cur.id in heading and nxt.id not in heading:
        return pauses.title
    ahead = nxt.direction.pause_before or 0.0  # a pause the producer put before the next one
    if cur.pause_after is not None and cur.id not in heading:
        return cur.pause_after + ahead
    if (nxt.chapter, nxt.paragraph) != (cur.chapter, cur.paragraph):
        return pauses.paragraph + ahead
    return pauses.sentence + ahead


class PeakCache:
    """Computes and remembers waveforms (thread-safe; used from the task thread)."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._memo: OrderedDict[tuple, WaveformData] = OrderedDict()
        self.computed = 0

    def get(self, project: Project, nodes: Sequence[SentenceNode], pauses: Pauses, label: str = "",
            titles: Mapping[int, str] | None = None, timing: Timing | None = None) -> WaveformData:
        titles = titles or {}
        memo = (label, pauses, timing, tuple(sorted(titles.items())),
                tuple((n.id, n.cache_key if n.cached else None, n.duration, n.pause_after, n.direction) for n in nodes))
        with self._lock:
            hit = self._memo.get(memo)
            if hit is not None:
                self._memo.move_to_end(memo)
                return hit
        data = compute(project, nodes, pauses, label, titles, timing)
        with self._lock:
            self.computed += 1
            self._memo[memo] = data
            while len(self._memo) > self.size:
                self._memo.popitem(last=False)
        return data


def compute(project: Project, nodes: Sequence[SentenceNode], pauses: Pauses, label: str = "",
            titles: Mapping[int, str] | None = None, timing: Timing | None = None) -> WaveformData:
    """Lay the sentences out as export does and reduce them to :data:`BUCKETS` peaks.

    A sentence without audio yet is drawn flat, as long as the duration estimate
    (``timing``, the snapshot's) predicts, so the waveform and the tree agree.
    """
    timing = timing or Timing(voice_rate(""))
    heading = heading_ids(nodes, titles or {})
    pieces: list[tuple[np.ndarray | None, float]] = []
    spans: list[SentenceSpan] = []
    t = 0.0
    rate = 22050
    for i, node in enumerate(nodes):
        audio = None
        if node.cached and node.cache_key:
            entry = project.cache_entry(node.cache_key)
            loaded = project.cache.load(entry) if entry is not None else None
            if loaded is not None:
                audio, rate = loaded, entry.sample_rate  # type: ignore[union-attr]
        length = audio.size / rate if audio is not None else timing.rate.sentence(node.text, timing.length_scale)
        gap = pause_after(nodes, i, pauses, heading)
        spans.append(SentenceSpan(node.id, t, t + length, audio is not None, gap,
                                  node.pause_after is not None and node.id not in heading))
        pieces.append((audio, length))
        pieces.append((None, gap))
        t += length + gap
    duration = max(t, 1e-3)
    mins = np.zeros(BUCKETS, np.float32)
    maxs = np.zeros(BUCKETS, np.float32)
    start = 0.0
    for audio, length in pieces:
        if audio is not None and audio.size:
            b0 = int(start / duration * BUCKETS)
            b1 = max(b0 + 1, int(round((start + length) / duration * BUCKETS)))
            edges = np.linspace(0, audio.size, b1 - b0 + 1).astype(np.int64)
            for k in range(b1 - b0):
                chunk = audio[edges[k]:max(edges[k + 1], edges[k] + 1)]
                if b0 + k < BUCKETS and chunk.size:
                    mins[b0 + k] = min(mins[b0 + k], float(chunk.min()))
                    maxs[b0 + k] = max(maxs[b0 + k], float(chunk.max()))
        start += length
    return WaveformData(label, duration, tuple(mins.tolist()), tuple(maxs.tolist()), tuple(spans))
