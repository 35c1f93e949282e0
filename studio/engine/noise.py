"""Seeded sampling noise: the same sentence, voice and settings give the same audio.

Why: a VITS voice draws random noise twice per sentence (the stochastic duration
predictor, scaled by ``noise_w``, and the prior latent, scaled by ``noise_scale``).
Drawn fresh each time, a sentence rendered again came out a little longer or shorter
(64.47 s vs 64.72 s for one chapter), a resumed render differed from a clean one and
no bug report could be reproduced. Here the noise comes from a generator seeded by
what the sentence *is*: its phoneme ids (the text, language and lexicon as the voice
says them), its noise scales and speaker, and the take
(:attr:`~studio.engine.base.SynthesisSettings.take`: 0 for a sentence's first
synthesis, a new number for each new take). So equal cache keys draw equal noise,
and the engines need no new argument: every backend, wrapper and the model process
pass ``(ids, settings)`` on as before.

Noise is drawn frame by frame (``(frames, channels)``, then transposed): the first
``n`` frames of a draw do not depend on how many frames were asked for, so a padded
batch row and a sentence alone get the same noise.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from studio.engine.base import SynthesisSettings

#: independent streams of one sentence's generator
DURATION_NOISE, PRIOR_NOISE = 0, 1


def sentence_seed(ids: Sequence[int], settings: SynthesisSettings) -> int:
    """A 64-bit seed from the sentence's ids, its noise settings, speaker and take.

    The speaking rate (``length_scale``) is left out on purpose: a sentence sped up
    keeps its reading (the same rhythm and grain, only faster), as a producer
    changing the speed expects; its cache key still changes, so it is rendered again.
    """
    h = hashlib.sha256(np.asarray(ids, dtype=np.int64).tobytes())
    drawn = f"ns={settings.noise_scale:g};nw={settings.noise_w:g};sid={settings.speaker_id}"
    h.update(f"\0{drawn}\0take={settings.take}".encode())
    return int.from_bytes(h.digest()[:8], "little")


def batch_seed(batch: Sequence[Sequence[int]], settings: SynthesisSettings) -> int:
    """One seed for a backend that draws a whole padded batch at once (torch).

    A sentence alone gets its :func:`sentence_seed`; in a batch of several the draw
    depends on the batch's sentences too, which is what a GPU batch can promise.
    """
    if len(batch) == 1:
        return sentence_seed(batch[0], settings)
    return sentence_seed([i for seq in batch for i in (*seq, -1)], settings)


def standard_normal(seed: int, stream: int, channels: int, frames: int) -> np.ndarray:
    """``(channels, frames)`` float32 standard normal noise of one sentence's stream."""
    rng = np.random.Generator(np.random.PCG64([seed, stream]))
    return np.ascontiguousarray(rng.standard_normal((frames, channels), dtype=np.float32).T)
