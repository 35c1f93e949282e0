"""One set of ONNX Runtime sessions per voice and process, shared by every stream.

Why: the streams of :mod:`studio.engine.serving.streams` each used to open their own
sessions of the same model. ONNX Runtime lets several threads call ``run`` on one
session at once (with one intra-op thread, each call runs on its caller's thread),
so N streams need the weights, the optimized graph and the start-up cost once, not
N times: about 0.6 s of CPU per extra stream at start and one copy of the weights
less per stream in memory. Engines built with the same model, threads, device and
window size share; the sessions are dropped when the last engine using them closes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Hashable


@dataclass
class LoadedModel:
    """What an engine needs from its loaded model (see ``OnnxPiperEngine.load``)."""

    session: Any  # onnxruntime.InferenceSession: the whole graph, or its first half
    decoder: Any  # the second half (None: whole sentences)
    cut: tuple[str, str]
    has_alignment: bool
    window_frames: int
    providers: list[str]
    #: where the first half takes and returns the sampling noise (split.PriorNoise; None: whole graph)
    noise: Any = None
    #: the decoder session runs :mod:`studio.engine.onnx.residual_layouts`' build
    decoder_layouts_kept: bool = False
    users: int = 0


_LOCK = threading.Lock()
_LOADED: dict[Hashable, LoadedModel] = {}
_LOADING: dict[Hashable, threading.Lock] = {}


def acquire(key: Hashable, load: Callable[[], LoadedModel]) -> LoadedModel:
    """The model for ``key``, loading it with ``load()`` if nobody holds it; one more user."""
    with _LOCK:
        gate = _LOADING.setdefault(key, threading.Lock())
    with gate:  # one loader per key; other keys load in parallel
        with _LOCK:
            model = _LOADED.get(key)
        if model is None:
            model = load()
            with _LOCK:
                _LOADED[key] = model
        with _LOCK:
            model.users += 1
        return model


def held(key: Hashable) -> bool:
    """Whether some engine holds the model for ``key`` (a new one then loads nothing)."""
    with _LOCK:
        return key in _LOADED


def release(key: Hashable, model: LoadedModel) -> None:
    """One user less; the sessions go when the last one leaves."""
    with _LOCK:
        model.users -= 1
        if model.users <= 0 and _LOADED.get(key) is model:
            del _LOADED[key]
