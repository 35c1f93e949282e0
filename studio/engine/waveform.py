"""What every engine does to a sentence's waveform on its way out: one peak rule, one seam.

Why shared: each family used to have its own (hard clipping in the VITS engines, peak
scaling in Kokoro; a 10 ms seam fade in XTTS, 5 ms in Kokoro), so the same book
sounded different at its loudest and at its joins by which family read it. The rule
kept is the one proof-listening agrees with: a clipped peak is flattened into a
buzz the recogniser flags, a sentence scaled down a little is not.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

#: the loudest sample a sentence leaves an engine with; louder sentences are scaled down to it
PEAK = 0.98
#: the fade at each seam where two pieces of one sentence meet (and at a piece's cut ends)
SEAM_FADE_S = 0.005


def limited(audio: np.ndarray) -> np.ndarray:
    """A float32 copy of one sentence's ``audio``, scaled to :data:`PEAK` when it peaks above it
    (never clipped: the waveform keeps its shape)."""
    out = np.array(audio, dtype=np.float32, copy=True).reshape(-1)
    peak = float(np.max(np.abs(out))) if out.size else 0.0
    if peak > PEAK:
        out *= np.float32(PEAK / peak)
    return out


def faded(audio: np.ndarray, rate: int, *, start: bool = True, end: bool = True,
          fade_s: float = SEAM_FADE_S) -> np.ndarray:
    """A copy of ``audio`` faded in at its start and out at its end over ``fade_s``: a cut meets zero."""
    out = np.array(audio, dtype=np.float32, copy=True)
    n = min(max(1, int(fade_s * rate)), out.size // 2 if start and end else out.size)
    if n:
        ramp = np.linspace(0.0, 1.0, n, dtype=np.float32)
        if start:
            out[:n] *= ramp
        if end:
            out[-n:] *= ramp[::-1]
    return out


def joined(pieces: Sequence[np.ndarray], rate: int, *, pause_s: float = 0.0, outer: bool = False) -> np.ndarray:
    """Pieces of one sentence end to end, each seam faded out and in (no click), ``pause_s`` of
    silence between them; ``outer``: fade the first start and the last end too (pieces cut
    out of longer audio)."""
    if not pieces:
        return np.zeros(0, np.float32)
    gap = np.zeros(int(pause_s * rate), np.float32)
    out: list[np.ndarray] = []
    for i, piece in enumerate(pieces):
        first, last = i == 0, i == len(pieces) - 1
        out.append(faded(piece, rate, start=outer or not first, end=outer or not last))
        if not last and gap.size:
            out.append(gap)
    return np.concatenate(out)
