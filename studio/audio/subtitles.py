"""Subtitles (SRT and WebVTT): one cue per spoken sentence, timed from the audio.

Why cues come from the assembled audio and not from estimates: every sentence's
real rendered length and every inserted pause are known exactly at assembly
(:class:`~studio.audio.assemble.Span`), and the voice's own lead-in and trailing
silence inside a clip are found by level, so a cue starts when the words start
and ends when they end. Mastering moves everything by its head shift; that shift
is applied here, so cues match the delivered file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from studio.audio.assemble import Span
from studio.audio.measure import window_rms

#: A window of a clip is speech when its RMS is within this of the clip's RMS.
_SPEECH_BELOW_CLIP_DB = 30.0
_WINDOW_S = 0.005


@dataclass(frozen=True)
class Cue:
    """One subtitle: seconds from the file's start, and the sentence."""

    start: float
    end: float
    text: str


def _audible(audio: np.ndarray, rate: int) -> tuple[int, int] | None:
    """First and last audible sample of a clip (5 ms windows), or None for silence."""
    size = max(1, int(round(_WINDOW_S * rate)))
    rms = window_rms(audio, size)
    level = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2))) if audio.size else 0.0
    if level == 0 or rms.size == 0:
        return None
    loud = np.flatnonzero(rms > level * 10 ** (-_SPEECH_BELOW_CLIP_DB / 20))
    if loud.size == 0:
        return None
    return int(loud[0]) * size, min(audio.size, (int(loud[-1]) + 1) * size)


def cues_from_spans(audio: np.ndarray, rate: int, spans: Sequence[Span], *, shift_s: float = 0.0,
                    offset: int = 0) -> list[Cue]:
    """Cues for ``spans`` of ``audio`` (the assembled chapter at ``rate``).

    ``offset`` is the sample where ``audio`` starts within the spans' chapter (a
    chapter split into parts), ``shift_s`` the mastering's head shift.
    """
    cues: list[Cue] = []
    for span in spans:
        start, end = span.start - offset, span.end - offset
        if not span.text.strip() or end <= 0 or start >= audio.size:
            continue
        found = _audible(audio[max(0, start):end], rate)
        if found is None:
            continue
        a, b = found
        cues.append(Cue(round((max(0, start) + a) / rate + shift_s, 3), round((max(0, start) + b) / rate + shift_s, 3),
                        " ".join(span.text.split())))
    return cues


def _stamp(seconds: float, sep: str) -> str:
    ms = int(round(max(0.0, seconds) * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def to_srt(cues: Sequence[Cue]) -> str:
    blocks = [f"{i}\n{_stamp(c.start, ',')} --> {_stamp(c.end, ',')}\n{c.text}\n" for i, c in enumerate(cues, 1)]
    return "\n".join(blocks)


def to_vtt(cues: Sequence[Cue]) -> str:
    blocks = [f"{_stamp(c.start, '.')} --> {_stamp(c.end, '.')}\n{c.text}\n" for c in cues]
    return "WEBVTT\n\n" + "\n".join(blocks)


def parse_cues(text: str) -> list[tuple[float, float, str]]:
    """``(start, end, text)`` of every cue in SRT or WebVTT text (to read them back)."""
    out: list[tuple[float, float, str]] = []

    def secs(stamp: str) -> float:
        h, m, rest = stamp.replace(",", ".").split(":")
        return int(h) * 3600 + int(m) * 60 + float(rest)

    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = [ln for ln in block.strip().split("\n") if ln]
        for i, line in enumerate(lines):
            if " --> " in line:
                a, b = line.split(" --> ")
                out.append((secs(a.strip()), secs(b.split()[0]), " ".join(lines[i + 1:])))
                break
    return out


__all__ = ["Cue", "cues_from_spans", "parse_cues", "to_srt", "to_vtt"]
