"""One voice run in two halves by two runtimes: text to latent by one, latent to audio by another.

Why: the ``bf16-cpu`` preset wants the flow and the decoder in bfloat16, which ONNX
Runtime's CPU provider cannot run, while the text encoder and the duration
predictor are best left to the FP32 ONNX graph every CPU preset uses: durations then
equal ``fp32-cpu``'s exactly, the noise is drawn per sentence the same way (same
seeds: a ``bf16-cpu`` render differs from an ``fp32-cpu`` one only by the decoder's
precision), and the process never loads coqui's model nor runs torch's slower
text encoder. The halves meet at the latent (:mod:`studio.engine.decode_windows`), so this
wrapper joins any engine that encodes latents to any object that decodes windows;
it imports neither backend (the preset factory hands both in).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Protocol, Sequence

import numpy as np

from studio.engine.base import DelegatingEngine, Engine, PendingBuild, SynthesisSettings
from studio.engine.decode_windows import Latent, Window, decode_all


class WindowDecoder(Protocol):
    """The second half: latent windows to audio (see :mod:`studio.engine.torchvits.script_decoder`)."""

    def load(self) -> None: ...

    def decode_window(self, latent: Latent, window: Window) -> np.ndarray: ...

    def pending_build(self) -> PendingBuild | None: ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


class SplitEngine(DelegatingEngine):
    """``encoder``'s front end and latents, ``decoder``'s audio; owns and closes both.

    Implements :class:`~studio.engine.decode_windows.WindowedDecoder`, so the render path's
    streams spread its windows over the cores like any windowed engine's.
    """

    def __init__(self, encoder: Engine, decoder: WindowDecoder, name: str) -> None:
        super().__init__(encoder)
        self.decoder = decoder
        self.name = name
        self._decoder_loaded: Future[None] | None = None
        self._lock = threading.Lock()

    @property
    def window_frames(self) -> int:
        return int(getattr(self.inner, "window_frames", 0))

    @property
    def config(self):  # -> studio.engine.voice.config.VoiceConfig
        """The voice's config (the streams read its hop length)."""
        return self.inner.config

    def load(self) -> None:
        """Load the encoder on this thread and the decoder on one of its own, at the same time.

        Why: the decoder's runtime can be slow to start (torch: ~2 s of one core to import),
        and loaded in turn it kept the other core idle at every render's start. Meanwhile the
        encoder loads and the first sentences get their ids and latents; the first window
        waits for the decoder (:meth:`decode_window`), and a decoder that fails to load
        says so there, on every window.
        """
        with self._lock:
            if self._decoder_loaded is None:
                self._decoder_loaded = Future()
                threading.Thread(target=self._load_decoder, args=(self._decoder_loaded,),
                                 name="studio-decoder-load", daemon=True).start()
        self.inner.load()

    def _load_decoder(self, done: Future[None]) -> None:
        try:
            self.decoder.load()
        except BaseException as exc:  # handed to every window that waits for it
            done.set_exception(exc)
        else:
            done.set_result(None)

    def pending_build(self) -> PendingBuild | None:
        return self.inner.pending_build() or self.decoder.pending_build()

    def describe(self) -> str:
        return f"{self.inner.describe()}; then {self.decoder.describe()}"

    def encode_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[Latent]:
        return self.inner.encode_batch(ids, settings)

    def decoding_ready(self) -> bool:
        """False while the decoder is loading (the streams encode ahead meanwhile)."""
        loading = self._decoder_loaded
        return loading is None or loading.done()

    def decode_window(self, latent: Latent, window: Window) -> np.ndarray:
        loading = self._decoder_loaded  # set by load(); None once closed (the decoder says so)
        if loading is not None:
            loading.result()
        return self.decoder.decode_window(latent, window)

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        return [audio for audio, _ in self.synthesize_batch_with_alignments(ids, settings)]

    def synthesize_batch_with_alignments(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """``(audio, samples per id)`` per item, each sentence's windows decoded on this thread."""
        self.load()
        out: list[tuple[np.ndarray, np.ndarray | None]] = []
        for seq in ids:
            if len(seq) == 0:
                out.append((np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)))
                continue
            (latent,) = self.encode_batch([seq], settings)
            out.append((decode_all(self, latent, self.config.hop_length), latent.samples_per_id))
        return out

    def close(self) -> None:
        """Close both halves, once the decoder has finished loading (a load cannot be stopped halfway)."""
        with self._lock:
            loading, self._decoder_loaded = self._decoder_loaded, None
        if loading is not None:
            loading.exception()  # wait; its error, if any, was the windows' to report
        self.decoder.close()
        self.inner.close()


__all__ = ["SplitEngine", "WindowDecoder"]
