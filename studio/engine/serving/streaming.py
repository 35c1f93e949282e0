"""Chunked streaming of long passages: first audio fast, then the rest.

Why: rendering a 2,000-character paragraph takes seconds; a preview that waits
for all of it feels broken. :func:`stream_passage` cuts the passage into chunks
and synthesizes them lazily, one per ``next()``, so a player can start on chunk 0
while the rest is still being made:

* the **first chunk is short** (``first_chunk_chars``, ~100): the first sentence
  if it fits, otherwise the text up to an early clause boundary (comma,
  semicolon, colon, dash), otherwise up to a word boundary -- so the first audio
  is ready in a fraction of a second;
* later chunks pack whole sentences up to a limit that **ramps up** from the
  first chunk's size (x ``growth`` = 2 per chunk) to ``chunk_chars`` (~300), so
  while chunk k plays, chunk k+1 -- at most twice as long -- is being made and
  playback does not run dry; a sentence longer than the limit is cut at its last
  clause boundary that fits (then at a space, and only as a last resort mid-word);
* **no text is ever dropped**: chunk spans ``(start, end)`` are contiguous and
  cover ``text[0:len(text)]`` exactly; whitespace between chunks belongs to the
  chunk before it (the whitespace is not spoken, but it is covered).

Each sentence of a chunk is one engine item (the engine's ``text_to_ids``
contract: one id sequence per sentence). On CPU items run one at a time (padded
batches measured slower there); with a :class:`~studio.engine.serving.batched.BatchedEngine`
or a CUDA engine a chunk's sentences go to the engine as one batch.

Output assembly: a chunk's sentence audios are written into one float32 buffer.
By default every chunk owns fresh memory. Pass ``pool=`` (a
:class:`~studio.engine.serving.buffers.BufferPool`) to reuse buffers instead; then
``AudioChunk.samples`` is a view of a pooled buffer that is **valid only until
the iterator is advanced (or closed)** -- copy it (``np.array(chunk.samples)``)
to keep it. In both cases ``samples`` is a read-only view.

Why chunks: the first audio of a long paragraph comes after its first chunk, not
after the whole paragraph (``bench/streaming.py``; docs/speed-notes.md, "Streaming").
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, SynthesisSettings
from studio.engine.serving.buffers import BufferPool
from studio.text.segment import is_speakable, sentence_bounds

__all__ = [
    "AudioChunk",
    "plan_chunks",
    "stream_passage",
    "DEFAULT_FIRST_CHUNK_CHARS",
    "DEFAULT_CHUNK_CHARS",
]

DEFAULT_FIRST_CHUNK_CHARS = 100
DEFAULT_CHUNK_CHARS = 300
#: the first chunk is not cut shorter than this at a clause boundary (a two-word
#: first chunk sounds clipped and saves little time)
DEFAULT_MIN_FIRST_CHARS = 24
#: chunk size ramp: chunk k may be ``growth**k`` times the first chunk (up to
#: chunk_chars). 2.0 keeps playback fed while synthesis runs faster than ~2x real time.
DEFAULT_GROWTH = 2.0

Span = tuple[int, int]


@dataclass(frozen=True)
class AudioChunk:
    """One synthesized piece of a passage.

    ``samples`` is a **read-only view** of float32 mono audio in [-1, 1]. When the
    stream was given a ``pool``, the view's memory is recycled as soon as the
    iterator advances: copy it to keep it. ``span`` is ``(start, end)`` into the
    passage; ``text`` is ``passage[start:end]`` (including the trailing
    whitespace that the chunk covers).
    """

    index: int
    samples: np.ndarray
    sample_rate: int
    span: Span
    text: str
    is_last: bool

    @property
    def start(self) -> int:
        return self.span[0]

    @property
    def end(self) -> int:
        return self.span[1]

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate if self.sample_rate else 0.0


# ----------------------------------------------------------------- text splitting

_CLOSERS = "\"'”’»)]}"
# clause boundary: , ; : followed by space, or a dash set off by spaces / an em dash
_CLAUSE_END = re.compile(r"[,;:](?=\s)|\s[-–—]\s|—|–")


def _with_trailing_space(text: str, end: int) -> int:
    n = len(text)
    while end < n and text[end].isspace():
        end += 1
    return end


def _visible_len(text: str, span: Span) -> int:
    return len(text[span[0] : span[1]].strip())


def _cut_point(text: str, start: int, end: int, limit: int, *, earliest: int | None = None) -> int:
    """Where to cut ``text[start:end]`` so the first part is at most ``limit`` chars.

    ``earliest=None``: the *last* clause boundary that fits, else the last space,
    else a hard cut. ``earliest=k``: the *first* clause boundary at or after
    ``start + k`` that fits (the short first chunk), falling back the same way.
    Returns an index in ``(start, end)``; the cut includes following whitespace.
    """
    hard = min(start + limit, end)
    # one char past the limit so the lookahead can see the space after a boundary
    window_end = min(hard + 1, end)
    clause_ends = [
        m.start() + 1 + len(m.group().strip()) if m.group()[0].isspace() else m.end()
        for m in _CLAUSE_END.finditer(text, start, window_end)
    ]
    clause_ends = [c for c in clause_ends if start < c <= hard]
    if earliest is not None:
        ok = [c for c in clause_ends if c - start >= earliest]
        if ok:
            return _with_trailing_space(text, ok[0])
    elif clause_ends:
        return _with_trailing_space(text, clause_ends[-1])
    space = text.rfind(" ", start + 1, hard + 1)
    if space > start and text[start:space].strip():
        return _with_trailing_space(text, space)
    return hard if hard > start else min(start + 1, end)


def plan_chunks(
    text: str,
    first_chunk_chars: int = DEFAULT_FIRST_CHUNK_CHARS,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    min_first_chars: int = DEFAULT_MIN_FIRST_CHARS,
    growth: float = DEFAULT_GROWTH,
) -> list[list[Span]]:
    """Plan a passage: a list of chunks, each a list of sentence(-piece) spans.

    The spans of all chunks, in order, are contiguous and cover ``text`` exactly.
    Every piece except possibly a lone whitespace passage has spoken text. Chunk
    ``k >= 1`` holds at most ``min(chunk_chars, len(first) * growth**k)`` spoken
    characters (``growth <= 1``: always ``chunk_chars``).
    """
    if first_chunk_chars < 1 or chunk_chars < 1:
        raise ValueError("chunk sizes must be >= 1")
    n = len(text)
    if n == 0:
        return []
    if not text.strip():
        return [[(0, n)]]

    sentences = sentence_bounds(text)
    chunks: list[list[Span]] = []

    # -- the first chunk: short, ends at a sentence or an early clause boundary
    first = sentences.pop(0)
    if _visible_len(text, first) > first_chunk_chars:
        lead = first[0]
        while lead < first[1] and text[lead].isspace():
            lead += 1
        cut = _cut_point(text, lead, first[1], first_chunk_chars, earliest=min_first_chars)
        if cut < first[1]:
            sentences.insert(0, (cut, first[1]))
            first = (first[0], cut)
    chunks.append([first])

    # -- the rest: whole sentences packed up to a limit that ramps from the first
    # chunk's size up to chunk_chars (x growth per chunk), so each chunk takes less
    # time to make than the audio before it takes to play; long sentences are cut
    base = max(_visible_len(text, first), min_first_chars, 1)

    def limit_for(k: int) -> int:
        if growth <= 1.0:
            return chunk_chars
        return int(min(chunk_chars, base * growth**k))

    queue = deque(sentences)
    current: list[Span] = []
    size = 0
    while queue:
        limit = limit_for(len(chunks))
        p = queue.popleft()
        plen = _visible_len(text, p)
        if not current and plen > limit:
            lead = p[0]
            while lead < p[1] and text[lead].isspace():
                lead += 1
            cut = _cut_point(text, lead, p[1], limit)
            if cut < p[1]:
                chunks.append([(p[0], cut)])
                queue.appendleft((cut, p[1]))
            else:
                chunks.append([p])
            continue
        if current and size + plen > limit:
            chunks.append(current)
            current, size = [], 0
            queue.appendleft(p)
            continue
        current.append(p)
        size += plen + 1
    if current:
        chunks.append(current)

    # -- whitespace/punctuation-only pieces ride along with the piece before them
    merged: list[list[Span]] = []
    for chunk in chunks:
        kept: list[Span] = []
        for p in chunk:
            if not is_speakable(text[p[0] : p[1]]):
                if kept:
                    kept[-1] = (kept[-1][0], p[1])
                    continue
                if merged:
                    merged[-1][-1] = (merged[-1][-1][0], p[1])
                    continue
            kept.append(p)
        if kept:
            merged.append(kept)
    # a leading unspeakable piece (e.g. "... Then") merges forward
    if len(merged) > 1 and not is_speakable(text[merged[0][0][0] : merged[0][-1][1]]):
        head = merged.pop(0)
        merged[0][0] = (head[0][0], merged[0][0][1])
    return merged


# ----------------------------------------------------------------- streaming


def _ids(engine: Engine, sentence: str, language: str, lexicon: Lexicon | None) -> list[int]:
    """One sentence's ids with the entries that occur in it (the render's rule)."""
    used = lexicon.applicable(sentence, language) if lexicon else None
    return engine.text_to_ids(sentence, language, used) if used else engine.text_to_ids(sentence, language)


def _batch_by_default(engine: Engine) -> bool:
    from studio.engine.serving.batched import BatchedEngine  # local: batching imports nothing from here

    if isinstance(engine, BatchedEngine):
        return True
    return str(getattr(engine, "device", "cpu")).startswith("cuda")


def stream_passage(
    engine: Engine,
    text: str,
    language: str,
    settings: SynthesisSettings,
    *,
    first_chunk_chars: int = DEFAULT_FIRST_CHUNK_CHARS,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    min_first_chars: int = DEFAULT_MIN_FIRST_CHARS,
    growth: float = DEFAULT_GROWTH,
    sentence_pause_s: float = 0.0,
    pool: BufferPool | None = None,
    batch_sentences: bool | None = None,
    lexicon: Lexicon | None = None,
) -> Iterator[AudioChunk]:
    """Yield the passage's audio chunk by chunk (lazily: each ``next()`` synthesizes one).

    ``sentence_pause_s`` inserts that much silence between sentences of a chunk.
    ``pool``: reuse output buffers (samples then valid only until the next
    ``next()``; see the module docstring). ``batch_sentences``: send a chunk's
    sentences to the engine as one batch (default: only for a BatchedEngine or a
    CUDA engine; one at a time on CPU, where that measured faster).
    ``lexicon``: the pronunciation entries to apply (a preview then sounds like the
    render will: each sentence gets the entries that occur in it).
    """
    plan = plan_chunks(text, first_chunk_chars, chunk_chars, min_first_chars, growth)
    if batch_sentences is None:
        batch_sentences = _batch_by_default(engine)
    sr = engine.sample_rate
    pause = max(0, int(round(sentence_pause_s * sr)))
    last = len(plan) - 1
    for index, pieces in enumerate(plan):
        span = (pieces[0][0], pieces[-1][1])
        spoken = [text[a:b].strip() for a, b in pieces]
        spoken = [s for s in spoken if is_speakable(s)]
        ids = [_ids(engine, s, language, lexicon) for s in spoken]
        ids = [i for i in ids if len(i)]
        audios = _synthesize(engine, ids, settings, batch_sentences)
        total = sum(len(a) for a in audios) + pause * max(0, len(audios) - 1)
        buf = pool.acquire((total,), np.float32) if pool is not None else np.empty(total, np.float32)
        try:
            pos = 0
            for k, a in enumerate(audios):
                if k and pause:
                    buf[pos : pos + pause] = 0.0
                    pos += pause
                buf[pos : pos + len(a)] = a
                pos += len(a)
            view = buf.view()
            view.setflags(write=False)
            yield AudioChunk(
                index=index,
                samples=view,
                sample_rate=sr,
                span=span,
                text=text[span[0] : span[1]],
                is_last=index == last,
            )
        finally:
            if pool is not None:
                pool.release(buf)


def _synthesize(
    engine: Engine, ids: Sequence[Sequence[int]], settings: SynthesisSettings, batch: bool
) -> list[np.ndarray]:
    if not ids:
        return []
    if batch:
        return list(engine.synthesize_batch(ids, settings))
    return [engine.synthesize_batch([i], settings)[0] for i in ids]
