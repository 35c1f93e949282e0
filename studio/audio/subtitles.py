"""Subtitles (SRT and WebVTT): one cue per spoken sentence, timed from the audio.

Why cues come from the audio and not from estimates: every sentence's real
rendered length and every inserted pause are known exactly at assembly
(:class:`~studio.audio.assemble.Span`); mastering moves them all by its head
shift. Within each sentence's place in the *mastered* audio, the voice's own
lead-in and trailing silence are found by level, so a cue starts when the words
start and ends when they end, in the file as delivered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from studio.audio.assemble import Span
from studio.audio.measure import EDGE_THRESHOLD_DB, window_rms

_WINDOW_S = 0.005


@dataclass(frozen=True)
class Cue:
    """One subtitle: seconds from the file's start, and the sentence."""

    start: float
    end: float
    text: str


def cues_from_spans(audio: np.ndarray, rate: int, spans: Sequence[Span], span_rate: int, *,
                    shift_s: float = 0.0, threshold_db: float = EDGE_THRESHOLD_DB) -> list[Cue]:
    """Cues for ``spans`` (samples at ``span_rate``, as assembled) in the delivered
    ``audio`` at ``rate``, whose content the mastering moved by ``shift_s``.

    Each cue runs from the first to the last 5 ms window of its clip louder than
    ``threshold_db`` -- the level that also tells speech from room tone at the
    file's head and tail -- so cue edges are where the audio's silences are.
    """
    size = max(1, int(round(_WINDOW_S * rate)))
    level = 10 ** (threshold_db / 20)
    cues: list[Cue] = []
    for span in spans:
        a = max(0, int(round((span.start / span_rate + shift_s) * rate)))
        b = min(audio.size, int(round((span.end / span_rate + shift_s) * rate)))
        if not span.text.strip() or b <= a:
            continue
        loud = np.flatnonzero(window_rms(audio[a:b], size) > level)
        if loud.size == 0:
            continue
        first, last = a + int(loud[0]) * size, min(b, a + (int(loud[-1]) + 1) * size)
        cues.append(Cue(round(first / rate, 3), round(last / rate, 3), " ".join(span.text.split())))
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
