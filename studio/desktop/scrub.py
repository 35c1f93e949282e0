"""Scrubbing: short grains of rendered audio from the exact time under the mouse.

Why grains, as Audacity scrubs: a producer dragging the playhead listens for a
word or a breath, which a sentence-by-sentence jump cannot find. Each mouse
position plays ``GRAIN_S`` of the sentence's cached audio starting exactly there;
the next position replaces it (the preview player's latest-request-wins), so the
sound follows the mouse however fast it moves.

Why through the preview player: one audio output path for the app. A grain is a
play-list segment whose "cache key" names the sentence's cache entry, an offset
and a length (:func:`grain_key`); the player's feeder thread loads and cuts it
(:func:`cut_grain`), so the GUI thread never reads audio.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: a grain's length: long enough to hear a phoneme, short enough to follow the mouse
GRAIN_S = 0.07
#: the fade at each end of a grain (a cut mid-waveform would click)
FADE_S = 0.004
#: the play-list label of a grain (the waveform's cursor ignores those positions: the mouse leads)
SCRUB_LABEL = "scrub"
_PREFIX = "grain:"


@dataclass(frozen=True)
class Grain:
    """``length_s`` of the audio cached under ``cache_key``, from ``offset_s`` into it."""

    cache_key: str
    offset_s: float
    length_s: float = GRAIN_S


def grain_key(grain: Grain) -> str:
    """The play-list key naming a grain (a cache key is hex: the separators cannot clash; the
    times round-trip exactly, so the grain starts on the very sample under the mouse)."""
    return f"{_PREFIX}{grain.cache_key}:{grain.offset_s!r}:{grain.length_s!r}"


def parse_grain_key(key: str) -> Grain | None:
    """The grain a play-list key names; None for any other key."""
    if not key.startswith(_PREFIX):
        return None
    cache_key, offset, length = key[len(_PREFIX):].rsplit(":", 2)
    return Grain(cache_key, float(offset), float(length))


def cut_grain(audio: np.ndarray, rate: int, offset_s: float, length_s: float = GRAIN_S) -> np.ndarray:
    """The grain's samples (clipped to the audio), faded in and out over :data:`FADE_S`;
    the samples between the fades are the cached ones, untouched."""
    start = min(max(0, int(round(offset_s * rate))), audio.size)
    out = np.array(audio[start:start + max(1, int(round(length_s * rate)))], dtype=np.float32)
    fade = min(int(FADE_S * rate), out.size // 2)
    if fade:
        ramp = (0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, fade, endpoint=False))).astype(np.float32)
        out[:fade] *= ramp
        out[out.size - fade:] *= ramp[::-1]
    return out


__all__ = ["FADE_S", "GRAIN_S", "Grain", "SCRUB_LABEL", "cut_grain", "grain_key", "parse_grain_key"]
