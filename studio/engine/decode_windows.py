"""Windowed decoding: the latent of a sentence decoded in fixed windows, not in one pass.

Why: in a VITS voice everything after the latent (normalizing flow, HiFi-GAN
decoder) is convolutional and looks only a few dozen latent frames to each side.
Decoding the latent in windows of :data:`WINDOW_FRAMES` frames, each widened by
:data:`OVERLAP_FRAMES` frames of context on both sides that are decoded and then
cut away, gives the same samples as one pass (32 frames of context: a largest difference
of 2.8e-7 on book prose; docs/speed-notes.md, "Windowed decoding"), and:

* memory is bounded by the window, not by the longest sentence of the book;
* the windows of one long sentence can be decoded on different streams, so a
  paragraph-long sentence keeps both cores busy (:mod:`studio.engine.serving.streams`);
* the first audio of a long paragraph exists after one window.

An engine that can decode in windows implements :class:`WindowedDecoder`;
:func:`decode_all` is the one-stream loop over a sentence's windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from studio.engine.base import SynthesisSettings
from studio.engine.waveform import limited

#: latent frames per window (x256 samples: ~5.9 s of audio at 22.05 kHz): as fast as 768
#: once ONNX Runtime's scratch buffers stay in the heap (:mod:`studio.stack.isolation.memory`),
#: with a lower peak; the A B pairs are in docs/speed-notes.md, "Windowed decoding"
WINDOW_FRAMES = 512
#: context frames decoded on each side of a window and cut away (flow + decoder reach)
OVERLAP_FRAMES = 32


@dataclass(frozen=True)
class Window:
    """Frames ``[start, stop)`` of the output, decoded from frames ``[lo, hi)`` of the latent."""

    start: int
    stop: int
    lo: int
    hi: int


def plan_windows(frames: int, window: int = WINDOW_FRAMES, overlap: int = OVERLAP_FRAMES) -> list[Window]:
    """The windows covering ``frames`` latent frames, none decoding more than ``window + 2 * overlap``.

    Why that cap: ONNX Runtime's arena keeps (and grows, by doubling) whatever the
    largest call asked for, so the largest decoded span decides the memory for good;
    capped, it is reached by the first long sentence and never exceeded (the soak
    grew +26 % when a rare 527-frame tail window came late). A sentence that fits in
    the cap is one window; longer ones are cut into equal windows of at most
    ``window`` frames, so there is no short tail window decoded mostly for its context.
    """
    if frames <= 0:
        return []
    if window <= 0 or frames <= window + 2 * overlap:
        return [Window(0, frames, 0, frames)]
    count = -(-frames // window)
    bounds = [round(k * frames / count) for k in range(count + 1)]
    return [
        Window(a, b, max(0, a - overlap), min(frames, b + overlap))
        for a, b in zip(bounds[:-1], bounds[1:])
    ]


@dataclass
class Latent:
    """One sentence between the two halves: its latent and what its audio needs.

    ``z``: ``[channels, frames]`` float32 (noise already drawn); ``samples_per_id``:
    audio samples per input id (None without an alignment output); ``windows``:
    the plan its audio is decoded by; ``louder``: sample spans its decoder raises.
    """

    z: np.ndarray
    samples_per_id: np.ndarray | None
    windows: list[Window]
    #: sample spans to raise (emphasized words, :mod:`studio.engine.emphasis`); applied per window
    louder: tuple[tuple[int, int], ...] = ()

    @property
    def frames(self) -> int:
        return int(self.z.shape[-1])


@runtime_checkable
class WindowedDecoder(Protocol):
    """An engine whose synthesis is split at the latent (see module notes)."""

    #: latent frames per window (0: the engine decodes whole sentences)
    window_frames: int

    def encode_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[Latent]:
        """Text ids -> one latent per item (the noise is drawn here)."""
        ...

    def decode_window(self, latent: Latent, window: Window) -> np.ndarray:
        """The audio of ``window`` (``(stop - start) * hop`` samples, float32, unclipped)."""
        ...

    def decoding_ready(self) -> bool:
        """False while the second half is still loading (a window would wait for it):
        the streams then encode the sentences ahead instead of waiting with them."""
        ...


def windowed(engine: object) -> bool:
    """True when ``engine`` decodes in windows (the streams then spread windows, not sentences)."""
    return isinstance(engine, WindowedDecoder) and getattr(engine, "window_frames", 0) > 0


def finish(pieces: Sequence[np.ndarray], samples_per_id: np.ndarray | None, hop: int) -> np.ndarray:
    """A sentence's audio from its windows' audio, in order: cropped and limited as one pass is."""
    audio = np.concatenate(pieces) if len(pieces) != 1 else pieces[0]
    if samples_per_id is not None:
        n = max(int(samples_per_id.sum()), hop)  # the model clamps its length to >= 1 frame
        audio = audio[:n]
    return limited(audio)


def decode_all(engine: WindowedDecoder, latent: Latent, hop: int) -> np.ndarray:
    """A sentence's audio, its windows decoded one after the other on this thread."""
    return finish([engine.decode_window(latent, w) for w in latent.windows], latent.samples_per_id, hop)
