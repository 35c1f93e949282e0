"""A performance of a voice (pitch and pace), and the parts of one sentence joined.

Why Rubber Band (through pedalboard) and not the voice's own scales or another
library: a VITS voice has no pitch input, and its length scale is rounded per
phoneme (a pace of 0.9 comes out 1.03x long, not 1.11x); of the libraries measured
on the bundled voice (docs/cast.md) Rubber Band met the pitch asked most closely,
stretched exactly and left no click at the edges, at a few hundredths of a second
per second of audio.

Joins: a sentence whose quote and narration are spoken by two voices is rendered
in parts; each part's silence at a join is trimmed and the punctuation's own pause
put back, with a few milliseconds of fade so no step in the waveform clicks.
"""

from __future__ import annotations

import numpy as np

#: pause put back at a join, by the punctuation that ends the part before it (seconds)
JOIN_PAUSES = {",": 0.12, ";": 0.2, ":": 0.2, ".": 0.3, "!": 0.3, "?": 0.3, "\u2014": 0.08, "\u2026": 0.3}
JOIN_PAUSE_DEFAULT = 0.04
FADE_S = 0.004
#: a sample quieter than this (relative to the part's peak) is silence at an edge
EDGE_SILENCE = 10 ** (-40 / 20)


def perform(audio: np.ndarray, rate: int, *, pitch: float = 0.0, pace: float = 1.0) -> np.ndarray:
    """``audio`` higher or lower by ``pitch`` semitones and ``pace`` times as fast."""
    if not pitch and pace == 1.0:
        return audio
    import pedalboard

    out = pedalboard.time_stretch(np.asarray(audio, np.float32)[None, :], rate, stretch_factor=float(pace),
                                  pitch_shift_in_semitones=float(pitch))[0]
    return np.clip(out, -1.0, 1.0).astype(np.float32)


def join_pause(text_before: str) -> float:
    """The pause a join keeps after a part ending in ``text_before``'s last punctuation."""
    tail = text_before.rstrip().rstrip("\"'\u201d\u2019\u00bb\u203a ")
    return JOIN_PAUSES.get(tail[-1:], JOIN_PAUSE_DEFAULT) if tail else JOIN_PAUSE_DEFAULT


def join_parts(clips: list[np.ndarray], texts: list[str], rate: int,
               bounds: list[tuple[int, int]] | None = None) -> np.ndarray:
    """The parts of one sentence as one clip: edge silence trimmed at each join, the
    punctuation's pause put back, a short fade on each cut edge. ``bounds`` (when given)
    receives each part's ``(start, end)`` sample in the clip (what proof-listening cuts)."""
    if len(clips) == 1:
        if bounds is not None:
            bounds.append((0, len(clips[0])))
        return clips[0]
    fade = max(1, int(FADE_S * rate))
    out: list[np.ndarray] = []
    at = 0
    for i, clip in enumerate(clips):
        a = np.asarray(clip, np.float32)
        start, end = _voiced_bounds(a)
        a = a[start if i > 0 else 0:end if i < len(clips) - 1 else len(a)].copy()
        if i > 0 and a.size > fade:
            a[:fade] *= np.linspace(0.0, 1.0, fade, dtype=np.float32)
        if i < len(clips) - 1 and a.size > fade:
            a[-fade:] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
        out.append(a)
        if bounds is not None:
            bounds.append((at, at + a.size))
        at += a.size
        if i < len(clips) - 1:
            out.append(np.zeros(int(join_pause(texts[i]) * rate), np.float32))
            at += out[-1].size
    return np.concatenate(out)


def _voiced_bounds(audio: np.ndarray) -> tuple[int, int]:
    if audio.size == 0:
        return 0, 0
    loud = np.flatnonzero(np.abs(audio) > EDGE_SILENCE * max(float(np.abs(audio).max()), 1e-9))
    if loud.size == 0:
        return 0, audio.size
    return int(loud[0]), int(loud[-1]) + 1
