"""One loaded model per key and process, shared by every engine that asks for it.

Why: several streams (:mod:`studio.engine.serving.streams`) each used to open their own
sessions of the same model. ONNX Runtime lets several threads call ``run`` on one
session at once (with one intra-op thread, each call runs on its caller's thread), so N
streams need the weights, the optimized graph and the start-up cost once, not N times:
about 0.6 s of CPU per extra stream at start and one copy of the weights less per stream
in memory. Every family's engines share this way (the key says what must match: model,
threads, device, window size); the model is dropped when the last engine using it closes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Hashable


@dataclass
class _Held:
    value: Any
    users: int = 0


_LOCK = threading.Lock()
_LOADED: dict[Hashable, _Held] = {}
_LOADING: dict[Hashable, threading.Lock] = {}


def acquire(key: Hashable, load: Callable[[], Any]) -> Any:
    """The model for ``key``, loading it with ``load()`` if nobody holds it; one more user."""
    with _LOCK:
        gate = _LOADING.setdefault(key, threading.Lock())
    with gate:  # one loader per key; other keys load in parallel
        with _LOCK:
            held = _LOADED.get(key)
        if held is None:
            held = _Held(load())
            with _LOCK:
                _LOADED[key] = held
        with _LOCK:
            held.users += 1
        return held.value


def held(key: Hashable) -> bool:
    """Whether some engine holds the model for ``key`` (a new one then loads nothing)."""
    with _LOCK:
        return key in _LOADED


def release(key: Hashable, value: Any) -> None:
    """One user of ``value`` less; the model goes when the last one leaves."""
    with _LOCK:
        entry = _LOADED.get(key)
        if entry is None or entry.value is not value:
            return
        entry.users -= 1
        if entry.users <= 0:
            del _LOADED[key]
