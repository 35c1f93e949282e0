"""Checks of the sound itself: clipping, a noise burst, a long silence inside, an abrupt end.

Why plain numpy on 10 ms frames: these faults need no recogniser and must be
found even where it hears the words fine (a click over a word, a clipped shout).
Levels are taken relative to the sentence's own speech level (the 90th
percentile of its frame levels), so the checks hold for a quiet voice, a loud one
and a human recording with room tone alike. Figures are calibrated on the bundled
voice: it ends every sentence with 100-150 ms below -80 dBFS and pauses at most
about half a second at a dash or semicolon.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FRAME_S = 0.01
#: a silence inside a sentence longer than this is flagged (the voice pauses <= ~0.5 s)
LONG_SILENCE_S = 1.0
SILENCE_BELOW_SPEECH_DB = 40.0
#: the last 30 ms louder than this below speech level: the audio stops mid-sound
CUT_BELOW_SPEECH_DB = 35.0
CLIP_RUN = 3
CLIP_MIN_RUNS = 3
BURST_FLATNESS = 0.35
BURST_MIN_S = 0.04


@dataclass(frozen=True)
class SignalIssue:
    """One fault in the sound: ``kind`` (clipping, noise, silence, cut), where (seconds), and a plain reason."""

    kind: str
    start: float
    end: float
    reason: str


def frame_db(audio: np.ndarray, rate: int, frame_s: float = FRAME_S) -> np.ndarray:
    size = max(1, int(rate * frame_s))
    n = len(audio) // size
    if n == 0:
        return np.zeros(0)
    frames = audio[: n * size].astype(np.float64).reshape(n, size)
    return 10.0 * np.log10(np.mean(frames * frames, axis=1) + 1e-12)


def check_signal(audio: np.ndarray, rate: int) -> list[SignalIssue]:
    """Every sound fault found in one sentence's audio (empty list: it sounds clean)."""
    x = np.asarray(audio, dtype=np.float32).reshape(-1)
    if x.size < rate * 0.05:
        return []
    levels = frame_db(x, rate)
    speech = float(np.percentile(levels, 90))
    return [*_clipping(x, rate), *_bursts(x, rate, levels, speech), *_silences(levels, speech), *_cut(x, rate, speech)]


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of True."""
    if not mask.any():
        return []
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def _clipping(x: np.ndarray, rate: int) -> list[SignalIssue]:
    """Flat tops: runs of samples stuck at the peak (at full scale or wherever a limiter cut)."""
    peak = float(np.max(np.abs(x)))
    if peak <= 0.0:
        return []
    stuck = np.abs(x) >= peak * 0.995
    runs = [r for r in _runs(stuck) if r[1] - r[0] >= CLIP_RUN]
    if len(runs) < CLIP_MIN_RUNS:
        return []
    share = sum(b - a for a, b in runs) / x.size
    return [SignalIssue("clipping", runs[0][0] / rate, runs[-1][1] / rate,
                        f"clipping: {len(runs)} flattened peaks ({share:.2%} of the samples)")]


def _bursts(x: np.ndarray, rate: int, levels: np.ndarray, speech: float) -> list[SignalIssue]:
    """Loud broadband noise: frames whose spectrum is flat over the whole band (speech's is not)."""
    size = max(1, int(rate * 0.02))
    n = len(x) // size
    if n < 2:
        return []
    frames = x[: n * size].astype(np.float64).reshape(n, size) * np.hanning(size)
    power = np.abs(np.fft.rfft(frames, axis=1))[:, 1:] ** 2 + 1e-12
    flatness = np.exp(np.mean(np.log(power), axis=1)) / np.mean(power, axis=1)
    loud = 10.0 * np.log10(np.mean(frames * frames, axis=1) + 1e-12) > speech - 12.0
    runs = [r for r in _runs((flatness > BURST_FLATNESS) & loud) if (r[1] - r[0]) * 0.02 >= BURST_MIN_S]
    return [SignalIssue("noise", a * 0.02, b * 0.02,
                        f"noise burst at {a * 0.02:.2f} s ({(b - a) * 20} ms of loud broadband noise)")
            for a, b in runs]


def _silences(levels: np.ndarray, speech: float) -> list[SignalIssue]:
    voiced = np.flatnonzero(levels > speech - SILENCE_BELOW_SPEECH_DB)
    if voiced.size == 0:
        return []
    inner = levels[voiced[0]: voiced[-1] + 1] <= speech - SILENCE_BELOW_SPEECH_DB
    out = []
    for a, b in _runs(inner):
        if (b - a) * FRAME_S >= LONG_SILENCE_S:
            start = (voiced[0] + a) * FRAME_S
            out.append(SignalIssue("silence", start, start + (b - a) * FRAME_S,
                                   f"long silence of {(b - a) * FRAME_S:.1f} s inside the sentence at {start:.2f} s"))
    return out


def _cut(x: np.ndarray, rate: int, speech: float) -> list[SignalIssue]:
    tail = x[-int(rate * 0.03):].astype(np.float64)
    level = 10.0 * np.log10(np.mean(tail * tail) + 1e-12)
    if level <= speech - CUT_BELOW_SPEECH_DB:
        return []
    end = len(x) / rate
    return [SignalIssue("cut", end - 0.03, end, "cut short: the audio stops in the middle of a sound")]
