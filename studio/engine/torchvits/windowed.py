"""The torch engine decoding in windows, one thread per engine: the ``bf16-cpu`` preset's engine.

Why windows on torch too: the flow and HiFi-GAN decoder look only a few dozen
latent frames to each side (:mod:`studio.engine.windows`), so a sentence's latent
decoded in windows gives the audio of one pass, with three gains on a CPU:

* the render path's streams (:class:`~studio.engine.serving.streams.MultiStreamEngine`)
  spread the windows of one long sentence over all cores, each stream one torch
  thread. One engine with N intra-op threads instead spends its time in OpenMP's
  barriers, and on a shared machine those threads spin while a neighbour holds
  the core: measured on a 2-core Zen 4 with other work running, the same window
  cost 1.5 CPU-s on two threads and 0.25 CPU-s on one;
* oneDNN builds its kernels per input shape (a new length cost 0.23 CPU-s where a
  repeated one cost 0.15 for a 200-frame window): every decoded span is rounded up
  to a multiple of :data:`SHAPE_STEP` frames, by taking more of the sentence's own
  latent as context where it has more (exact), else by silence after its end
  (masked, so the flow sees the sentence's end; the last milliseconds differ by
  rounding-level amounts), so a book reuses a few dozen shapes;
* memory is bounded by the window, not by the longest sentence of the book.

The flow + decoder run as one traced, frozen graph
(``torch.jit.optimize_for_inference``: weights pre-packed for oneDNN, no per-call
weight reorders; measured 0.30 instead of 0.39 CPU-s per 480-frame window in
bfloat16, same samples). The streams of one process share one model and one graph
(:class:`_Shared`): loading the voice into coqui's Vits and tracing cost seconds,
and a second copy would only cost memory.

The text encoder and duration predictor run once per sentence in float32
(:meth:`encode_batch`), so durations are those of the FP32 model; only the flow
and decoder run in the engine's low-precision dtype.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.engine import emphasis
from studio.engine.base import SynthesisSettings
from studio.engine.torchvits.engine import TorchVitsEngine
from studio.engine.windows import OVERLAP_FRAMES, WINDOW_FRAMES, Latent, Window, decode_all, plan_windows


#: latent frames of the example the flow + decoder graph is traced with (any length runs)
_TRACE_FRAMES = 96
#: decoded spans are whole multiples of this many latent frames (see the module notes)
SHAPE_STEP = 32


_THREAD = threading.local()


def _own_threads(threads: int | None) -> None:
    """Give the calling thread its intra-op thread count (once per thread).

    Why: OpenMP keeps the team size per thread, and a stream's worker thread starts
    with the default (every core), not the count the engine set on the loading
    thread: each stream's kernels then ran on a team of all cores, the teams of
    both streams spinning against each other.
    """
    if threads is None or getattr(_THREAD, "threads", None) == threads:
        return
    import torch

    torch.set_num_threads(threads)
    _THREAD.threads = threads


class _Shared:
    """The loaded model and its traced flow + decoder, per (voice, dtype), counted by user."""

    lock = threading.Lock()
    loaded: dict[tuple[str, str], tuple[Any, ...]] = {}
    users: dict[tuple[str, str], int] = {}


class WindowedTorchEngine(TorchVitsEngine):
    """:class:`TorchVitsEngine` on a CPU with the flow + decoder run window by window.

    Implements :class:`~studio.engine.windows.WindowedDecoder`; :meth:`synthesize_batch`
    decodes each sentence's windows on the calling thread (the streams spread them).
    """

    name = "torch-windowed"

    def __init__(self, voice, device: str = "cpu", dtype=None, *, threads: int | None = None,
                 window_frames: int = WINDOW_FRAMES, **kw) -> None:
        if str(device) != "cpu":
            raise EngineError("windowed torch decoding is for the CPU (a GPU wants whole batches)")
        if window_frames <= 0:
            raise EngineError(f"window_frames must be > 0, got {window_frames}")
        super().__init__(voice, device, dtype, threads=threads, **kw)
        self.window_frames = window_frames
        self._graph: Any = None
        self._key: tuple[str, str] | None = None

    def load(self) -> None:
        """The shared model and graph of this voice and dtype (built by the first stream)."""
        if self._model is not None:
            return
        key = (str(self.model_path), f"{self._dtype_spec}|{','.join(self.low_precision_modules)}")
        with _Shared.lock:
            if self._model is not None:
                return
            found = _Shared.loaded.get(key)
            if found is None:
                super().load()
                found = (self._model, self.weights_report, self.hop_length, self._torch_device,
                         self._torch_dtype, self._trace())
                _Shared.loaded[key] = found
            else:
                if self.threads is not None:
                    import torch

                    torch.set_num_threads(self.threads)
                (self._model, self.weights_report, self.hop_length, self._torch_device,
                 self._torch_dtype, _graph) = found
            self._graph = found[-1]
            _Shared.users[key] = _Shared.users.get(key, 0) + 1
            self._key = key

    def _trace(self) -> Any:
        """The flow + decoder as a frozen TorchScript graph optimised for inference."""
        import warnings

        import torch

        from studio.engine.torchvits.export import flow_decoder_module

        channels = int(self._model.flow.channels) if hasattr(self._model.flow, "channels") else 192
        z = torch.zeros((1, channels, _TRACE_FRAMES))
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # the tracer's notes on coqui's shape asserts
            traced = torch.jit.trace(flow_decoder_module(self._model).eval(), (z, torch.ones((1, 1, _TRACE_FRAMES))),
                                     check_trace=False)
            return torch.jit.optimize_for_inference(traced.eval())

    def close(self) -> None:
        """Let go of the shared model; the last stream to close drops it."""
        with _Shared.lock:
            key, self._key = self._key, None
            self._graph = None
            if key is None:
                return
            _Shared.users[key] -= 1
            last = _Shared.users[key] == 0
            if last:
                del _Shared.users[key], _Shared.loaded[key]
            else:
                self._model = None
        if last:
            super().close()

    def describe(self) -> str:
        return (f"{super().describe()}; flow + decoder in windows of {self.window_frames} latent frames "
                f"(+{OVERLAP_FRAMES} context)")

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        return [audio for audio, _ in self.synthesize_batch_with_alignments(ids, settings)]

    def synthesize_batch_with_alignments(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(audio, samples per id)`` per item, one sentence at a time (no padded batches)."""
        out = []
        for seq in ids:
            if len(seq) == 0:
                out.append((np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)))
                continue
            (latent,) = self.encode_batch([seq], settings)
            out.append((decode_all(self, latent, self.hop_length), latent.samples_per_id))
        return out

    def encode_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[Latent]:
        """Text ids -> one latent per item: text encoder, durations and noise, in float32."""
        import torch

        from studio.engine.torchvits.infer import encode_latents

        self.load()
        _own_threads(self.threads)
        model = self._model
        if model is None:
            raise EngineError("engine is closed")
        try:
            self.config.resolve_speaker(settings.speaker_id)  # single speaker -> None
        except ValueError as exc:
            raise EngineError(str(exc)) from exc
        out = []
        for seq in ids:  # one at a time: padding would change nothing but the work
            x = torch.as_tensor(np.asarray([seq], dtype=np.int64))
            with torch.inference_mode():
                lat = encode_latents(model, x, torch.tensor([len(seq)]), settings.noise_scale,
                                     settings.length_scale, settings.noise_w)
            frames = int(lat.y_lengths[0])
            per_id = lat.durations[0, : len(seq)].round().to(torch.int64).numpy()
            z = np.ascontiguousarray(lat.z_p[0, :, :frames].float().numpy())
            louder: tuple[tuple[int, int], ...] = ()
            if settings.emphasis_ids and int(per_id.sum()) == frames:  # stressed words (studio.engine.emphasis)
                z, per_id, louder = emphasis.stretch_latent(z, per_id, settings.emphasis_ids, self.hop_length)
                frames = int(z.shape[1])
            out.append(Latent(np.ascontiguousarray(z), per_id * self.hop_length,
                              plan_windows(frames, self.window_frames, OVERLAP_FRAMES), louder))
        return out

    def decode_window(self, latent: Latent, window: Window) -> np.ndarray:
        """The audio of one window (its context frames decoded, then cut away), float32."""
        import torch

        graph = self._graph
        if graph is None:
            raise EngineError("engine is closed")
        _own_threads(self.threads)
        size = -(-(window.hi - window.lo) // SHAPE_STEP) * SHAPE_STEP
        hi = min(latent.frames, window.lo + size)  # more context after the window, then before it
        lo = max(0, hi - size)
        z = np.zeros((1, latent.z.shape[0], size), dtype=np.float32)
        z[0, :, : hi - lo] = latent.z[:, lo:hi]
        mask = np.zeros((1, 1, size), dtype=np.float32)
        mask[..., : hi - lo] = 1.0  # past the sentence's end: silence the flow treats as padding
        with torch.inference_mode():
            audio = graph(torch.from_numpy(z), torch.from_numpy(mask))
        hop = self.hop_length
        audio = audio.reshape(-1)[(window.start - lo) * hop: (window.stop - lo) * hop].float().numpy()
        return emphasis.louder_window(audio, window.start * hop, latent.louder, self.sample_rate)


__all__ = ["WindowedTorchEngine"]
