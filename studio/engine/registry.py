"""Voice + backend name -> a ready-to-load :class:`~studio.engine.base.Engine`.

Why lazy imports: the torch backend drags in torch and coqui-tts (seconds of
import time, gigabytes on disk, optional extra); nobody who renders with the ONNX
backend should pay for it, and a missing optional install must become a readable
EngineError, not an ImportError traceback.
"""

from __future__ import annotations

import importlib
import inspect
import logging

from studio.core.errors import EngineError
from studio.engine.base import Engine
from studio.engine.voices import VoiceInfo

_LOGGER = logging.getLogger(__name__)

BACKENDS = ("onnx", "torch")


def load_engine(
    voice: VoiceInfo,
    backend: str = "onnx",
    *,
    device: str = "cpu",
    threads: int | None = None,
) -> Engine:
    """Construct (not yet :meth:`~Engine.load`) the engine that speaks ``voice``.

    ``onnx`` runs Piper voices; ``torch`` is ``studio.engine.torch_vits.TorchVitsEngine``
    (Piper or Coqui voices). ``threads`` only applies where the backend takes it.
    """
    if backend == "onnx":
        if voice.backend != "piper":
            raise EngineError(
                f"voice {voice.id!r} is a {voice.backend} checkpoint; it needs the torch backend"
            )
        from studio.engine.onnx_piper import OnnxPiperEngine

        return OnnxPiperEngine(voice.model_path, voice.config_path, device=device, threads=threads)

    if backend == "torch":
        try:
            module = importlib.import_module("studio.engine.torch_vits")
            engine_cls = getattr(module, "TorchVitsEngine")
        except Exception as exc:  # ImportError, missing torch/coqui, or a broken module
            raise EngineError(f"the torch backend is unavailable: {type(exc).__name__}: {exc}") from exc
        kwargs: dict[str, object] = {"device": device}
        if threads is not None and _accepts(engine_cls, "threads"):
            kwargs["threads"] = threads
        try:
            return engine_cls(voice, **kwargs)
        except EngineError:
            raise
        except Exception as exc:
            raise EngineError(f"cannot create torch engine for {voice.id!r}: {exc}") from exc

    raise EngineError(f"unknown backend {backend!r}; choose one of: {', '.join(BACKENDS)}")


def _accepts(cls: type, parameter: str) -> bool:
    """Whether the constructor takes ``parameter`` (the torch engine may not take threads)."""
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False
    return parameter in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
