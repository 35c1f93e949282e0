"""Chapter assembly: title, pause, sentences with pauses, paragraph breaks.

Why pauses are inserted here and not by the voice: neural voices end sentences at
unpredictable lengths of trailing silence and know nothing of paragraphs, so the
rhythm of the audiobook (sentence gap, longer paragraph gap, a clear break after
the chapter title) is imposed once, deterministically, at assembly time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

import numpy as np

from studio.audio.pcm import silence, to_float32
from studio.audio.resample import resample
from studio.core.errors import StudioError


@dataclass(frozen=True)
class Pauses:
    """Silence lengths in seconds.

    ``sentence`` follows every sentence inside a paragraph, ``paragraph`` follows
    the last sentence of a paragraph (instead of ``sentence``), ``title`` follows
    the spoken chapter title, ``chapter_end`` closes the file so players do not cut
    the last word when jumping to the next chapter.
    """

    sentence: float = 0.35
    paragraph: float = 0.8
    title: float = 1.5
    chapter_end: float = 0.0

    def __post_init__(self) -> None:
        for name in ("sentence", "paragraph", "title", "chapter_end"):
            value = getattr(self, name)
            if not (0.0 <= float(value) <= 30.0):
                raise StudioError(f"pause '{name}' must be between 0 and 30 seconds, got {value}")


@dataclass(frozen=True)
class Clip:
    """One piece of sentence audio with the rate it was rendered at (and what it says)."""

    audio: np.ndarray
    sample_rate: int
    text: str = ""
    #: the producer's pause after this clip (seconds), instead of the sentence/paragraph pause
    pause_after: float | None = None
    #: silence the producer put before this clip (seconds), added to the pause before it
    pause_before: float = 0.0


@dataclass(frozen=True)
class Span:
    """Where a clip landed in the assembled chapter: samples ``[start, end)`` at the
    output rate. Subtitles are timed from these, i.e. from the real rendered lengths."""

    start: int
    end: int
    text: str


def _at_rate(clip: Clip, rate: int) -> np.ndarray:
    audio = to_float32(clip.audio)
    return audio if clip.sample_rate == rate else resample(audio, clip.sample_rate, rate)


def iter_chapter(
    title: Clip | None,
    paragraphs: Iterable[Sequence[Clip]],
    pauses: Pauses,
    sample_rate: int,
    spans: list[Span] | None = None,
) -> Iterator[np.ndarray]:
    """Yield a chapter's float32 blocks at ``sample_rate``, in playing order.

    Layout: ``title, pauses.title, [s, sentence-pause, s, ..., s, paragraph-pause]*,
    chapter_end``; the last paragraph ends with its paragraph pause too, which keeps
    the gap between chapters natural when files play back to back. Clips at another
    rate (e.g. a second voice) are resampled one by one -- each is surrounded by
    silence, so per-clip filtering adds no seams. Empty paragraphs are skipped.
    ``paragraphs`` may be lazy (a generator loading audio as it goes), so a long
    chapter never has to sit in memory whole. ``spans``, when given, receives one
    :class:`Span` per clip as it is yielded.
    """
    pos = 0

    def clip_block(clip: Clip) -> np.ndarray:
        nonlocal pos
        audio = _at_rate(clip, sample_rate)
        if spans is not None:
            spans.append(Span(pos, pos + audio.size, clip.text))
        pos += audio.size
        return audio

    def gap(seconds: float) -> np.ndarray:
        nonlocal pos
        block = silence(seconds, sample_rate)
        pos += block.size
        return block

    if title is not None:
        yield clip_block(title)
        yield gap(pauses.title)
    for para in paragraphs:
        if not para:
            continue
        for i, clip in enumerate(para):
            if clip.pause_before:
                yield gap(clip.pause_before)
            yield clip_block(clip)
            last = i == len(para) - 1
            own = clip.pause_after
            yield gap(own if own is not None else pauses.paragraph if last else pauses.sentence)
    yield gap(pauses.chapter_end)


def assemble_chapter(
    title: Clip | None,
    paragraphs: Iterable[Sequence[Clip]],
    pauses: Pauses,
    sample_rate: int,
) -> np.ndarray:
    """The whole chapter as one float32 array (see :func:`iter_chapter` for the layout)."""
    blocks = list(iter_chapter(title, paragraphs, pauses, sample_rate))
    return np.concatenate(blocks).astype(np.float32, copy=False) if blocks else np.zeros(0, np.float32)
