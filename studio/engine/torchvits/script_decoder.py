"""A voice's flow + decoder as a cached TorchScript graph that decodes latent windows.

This is the second half of the ``bf16-cpu`` preset (the first half, text to latent,
is the FP32 ONNX encoder every CPU preset uses; :mod:`studio.engine.serving.split_engine`
joins them). Why a cached graph and not coqui's model: a model process that loads
coqui and builds its ``Vits`` from the voice's weights, then traces it, paid ~2 CPU
seconds before its first window, every render; the traced, frozen graph saved
once loads in ~0.03 s after ``import torch``. The build (coqui's ``Vits``, the
decoder's 2-D channels-last twin from :mod:`studio.engine.torchvits.layout2d`, trace,
freeze) runs on the first use and is cached on disk, keyed by the voice's content,
the dtype, torch's version and :data:`SCRIPT_VERSION`.

Decoding, one thread per stream:

* the render path's streams spread the windows of one long sentence over all
  cores, each stream one torch thread: one engine with N intra-op threads spends
  its time in OpenMP's barriers, and on a shared machine those threads spin while a
  neighbour holds the core (measured on a 2-core Zen 4 with other work running: the
  same window cost 1.5 CPU-s on two threads and 0.25 on one);
* oneDNN builds its kernels per input shape (a new length cost 0.23 CPU-s where a
  repeated one cost 0.15 for a 200-frame window): every decoded span is rounded up
  to a multiple of :data:`SHAPE_STEP` frames, by taking more of the sentence's own
  latent as context where it has more (exact), else by silence after its end
  (masked, so the flow sees the sentence's end; the last milliseconds differ by
  rounding-level amounts), so a book reuses a few dozen shapes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from studio.core import paths
from studio.core.errors import EngineError
from studio.core.files import atomic_file, build_lock, sha256_file_cached
from studio.engine import emphasis
from studio.engine.base import PendingBuild
from studio.engine.voice.config import VoiceConfig
from studio.engine.decode_windows import Latent, Window

_LOGGER = logging.getLogger(__name__)

#: bumped when the graph's recipe changes, so cached graphs are built again
SCRIPT_VERSION = 1
#: decoded spans are whole multiples of this many latent frames (see the module notes)
SHAPE_STEP = 32
#: latent frames of the example the graph is traced with (any length runs)
_TRACE_FRAMES = 96
_THREAD = threading.local()
#: loaded graphs of this process, shared by its streams: path -> [graph, users]
_LOADED: dict[str, list[Any]] = {}
_LOADED_LOCK = threading.Lock()


def _own_threads(threads: int | None) -> None:
    """Give the calling thread its intra-op thread count (once per thread).

    Why: OpenMP keeps the team size per thread, and a stream's worker thread starts
    with the default (every core), not the count set on the loading thread: each
    stream's kernels then ran on a team of all cores, the teams spinning against
    each other.
    """
    if threads is None or getattr(_THREAD, "threads", None) == threads:
        return
    import torch

    torch.set_num_threads(threads)
    _THREAD.threads = threads


def script_path(model_path: Path, dtype: str, cache_dir: str | Path | None = None) -> Path:
    """Where the graph of ``model_path`` in ``dtype`` is kept (torch is not imported)."""
    torch_version = importlib.metadata.version("torch")
    key = hashlib.sha256(
        f"{sha256_file_cached(model_path)}\0{dtype}\0torch={torch_version}\0v={SCRIPT_VERSION}".encode()
    ).hexdigest()
    folder = Path(cache_dir) if cache_dir is not None else paths.cache_dir()
    return folder / "torch" / f"{model_path.stem}.{dtype}-flow-decoder-{key[:24]}.pt"


def build_script(voice: Any, dtype: str, cache_dir: str | Path | None = None) -> Path:
    """The cached graph of ``voice``'s flow + decoder in ``dtype``, built on a miss."""
    from studio.engine.torchvits.engine import TorchVitsEngine

    source = TorchVitsEngine(voice, "cpu", dtype)
    out = script_path(source.model_path, dtype, cache_dir)
    with build_lock(out.with_suffix(".lock")):
        if out.is_file():
            return out
        import torch

        from studio.engine.torchvits.layout2d import flow_decoder_2d

        model = source.model  # coqui's Vits from the voice's weights, flow + decoder in dtype
        channels = int(getattr(model.flow, "channels", 192))
        example = (torch.zeros((1, channels, _TRACE_FRAMES)), torch.ones((1, 1, _TRACE_FRAMES)))
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # the tracer's notes on coqui's shape asserts
            traced = torch.jit.trace(flow_decoder_2d(model), example, check_trace=False)
            frozen = torch.jit.freeze(traced.eval())
        try:
            with atomic_file(out, ".tmp.pt") as tmp:
                torch.jit.save(frozen, str(tmp))
        finally:
            source.close()
        _LOGGER.info("built %s", out.name)
    return out


class ScriptWindowDecoder:
    """Decodes latent windows with the cached graph (``bfloat16`` by default).

    The streams of one process share one loaded graph (TorchScript inference holds no
    state between calls); each calls :meth:`decode_window` on its own thread.
    """

    def __init__(self, voice: Any, dtype: str = "bfloat16", *, threads: int | None = None,
                 cache_dir: str | Path | None = None) -> None:
        if dtype not in ("float32", "bfloat16"):
            raise EngineError(f"the scripted decoder runs float32 or bfloat16, not {dtype}")
        self.voice = voice
        self.dtype = dtype
        self.threads = threads
        self.cache_dir = cache_dir
        self.config = VoiceConfig.from_file(voice.config_path)
        self.hop_length = self.config.hop_length
        self._graph: Any = None
        self._path: str | None = None
        self._lock = threading.Lock()

    def pending_build(self) -> PendingBuild | None:
        """The graph, the first time this voice decodes in this dtype."""
        if self._graph is not None or script_path(Path(self.voice.model_path), self.dtype, self.cache_dir).is_file():
            return None
        return PendingBuild(f"the voice's {self.dtype} decoder (traced once)", "a few seconds")

    def load(self) -> None:
        """Build or find the graph and load it (once per process). Idempotent, thread-safe."""
        with self._lock:
            if self._graph is not None:
                return
            try:
                import torch
            except ImportError as exc:
                raise EngineError(f"the scripted decoder needs torch ({exc})") from exc
            if self.dtype == "bfloat16" and not torch.backends.mkldnn.is_available():
                raise EngineError(f"this torch build ({torch.__version__}) has no oneDNN (mkldnn) CPU kernels")
            path = str(build_script(self.voice, self.dtype, self.cache_dir))
            with _LOADED_LOCK:
                entry = _LOADED.get(path)
                if entry is None:
                    with warnings.catch_warnings():  # TorchScript's deprecation notice (torch >= 2.9)
                        warnings.simplefilter("ignore", DeprecationWarning)
                        graph = torch.jit.optimize_for_inference(torch.jit.load(path).eval())
                    entry = _LOADED[path] = [graph, 0]
                entry[1] += 1
            self._graph, self._path = entry[0], path

    def decode_window(self, latent: Latent, window: Window) -> np.ndarray:
        """The audio of one window (its context frames decoded, then cut away), float32."""
        import torch

        graph = self._graph
        if graph is None:
            raise EngineError("the decoder is closed")
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
        return emphasis.louder_window(audio, window.start * hop, latent.louder, self.config.sample_rate)

    def describe(self) -> str:
        return (f"flow + decoder in {self.dtype} on torch/oneDNN (a traced graph cached on disk; "
                f"decoder as 2-D channels-last convolutions)")

    def close(self) -> None:
        """Let go of the shared graph; the last user drops it."""
        with self._lock:
            path, self._path, self._graph = self._path, None, None
        if path is None:
            return
        with _LOADED_LOCK:
            entry = _LOADED.get(path)
            if entry is not None:
                entry[1] -= 1
                if entry[1] <= 0:
                    del _LOADED[path]


__all__ = ["SHAPE_STEP", "ScriptWindowDecoder", "build_script", "script_path"]
