"""Heap bounds of a process that runs a model: glibc's mmap and trim thresholds and arenas, oneDNN's cache.

Why apart: these bounds are read at process start, so a model process gets them
through its environment (:meth:`HeapBounds.env`, set by :mod:`studio.stack.isolation.process`)
and an in-process engine through :meth:`HeapBounds.apply`; the soak benchmark
applies the same ones. Nothing here starts a process or knows an engine.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

#: glibc: allocations from 128 KiB up are served by ``mmap`` and unmapped on free.
#: glibc's default *dynamic* threshold rises after the first large free, and torch's
#: variable-sized activations then fragment the heap for good (the torch soak: +114 %
#: with the default, +2.5 % with this). Figures: docs/speed-notes.md, "Heap bounds".
DEFAULT_MALLOC_MMAP_THRESHOLD = 128 * 1024
#: ONNX Runtime keeps its tensors in its own arena, so only the Python side's arrays meet
#: glibc; a second glibc arena for ORT's other thread stepped the soak up by a quarter,
#: two at most kept it flat at the same speed (docs/speed-notes.md, "Heap bounds").
ONNX_MALLOC_ARENA_MAX = 2
#: ONNX Runtime allocates its convolutions' scratch (1-10 MB) outside its arena on every
#: run; served from the heap up to glibc's ceiling (with a trim threshold to match) it no
#: longer costs a million page faults per render (docs/speed-notes.md, "Heap bounds").
SERVING_MALLOC_THRESHOLD = 32 * 1024 * 1024


#: The BF16 windowed decoder on CPU (``bf16-cpu``): its activations are bounded by the
#: window and repeat a few dozen sizes, so they come from the heap (two arenas, one per
#: stream) and oneDNN keeps a kernel for every shape instead of recompiling
#: (docs/speed-notes.md, "Heap bounds").
WINDOWED_TORCH_ONEDNN_CACHE_CAPACITY = 4096

#: oneDNN (torch's CPU convolutions) caches a primitive per input shape, 1,024 by
#: default; with every sentence a new length that is ~100 MB filled for nothing.
#: 256 still holds a few forward passes' worth of layers.
DEFAULT_ONEDNN_CACHE_CAPACITY = 256


@dataclass(frozen=True)
class HeapBounds:
    """glibc's mmap threshold, trim threshold and arena count and oneDNN's kernel cache for
    a process that runs a model (``None``: the library's default)."""

    mmap_threshold: int | None = DEFAULT_MALLOC_MMAP_THRESHOLD
    trim_threshold: int | None = None
    arena_max: int | None = None
    onednn_cache: int | None = DEFAULT_ONEDNN_CACHE_CAPACITY

    def env(self) -> dict[str, str]:
        """Environment that sets these bounds in a process about to start (read at start-up)."""
        names = {"MALLOC_MMAP_THRESHOLD_": self.mmap_threshold, "MALLOC_TRIM_THRESHOLD_": self.trim_threshold,
                 "MALLOC_ARENA_MAX": self.arena_max, "ONEDNN_PRIMITIVE_CACHE_CAPACITY": self.onednn_cache}
        return {name: str(int(value)) for name, value in names.items() if value is not None}

    def apply(self) -> bool:
        """Set these bounds in *this* process, for in-process engines.

        Call it early -- before torch runs its first convolution (oneDNN reads its cache
        size once) and before the model is loaded (the heap is not defragmented after
        the fact). Children of :class:`~studio.stack.isolation.engine.IsolatedEngine` get the
        same settings through their environment and need no call. Returns whether glibc
        accepted the mmap threshold (``False`` off glibc, where nothing is changed).
        """
        if self.onednn_cache is not None:
            os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", str(int(self.onednn_cache)))
        if self.mmap_threshold is None or not sys.platform.startswith("linux"):
            return False
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6")
        except OSError:  # musl or another libc: leave it alone
            return False
        m_trim_threshold, m_mmap_threshold, m_arena_max = -1, -3, -8  # <malloc.h>
        if self.arena_max is not None:
            libc.mallopt(m_arena_max, int(self.arena_max))
        if self.trim_threshold is not None:
            libc.mallopt(m_trim_threshold, int(self.trim_threshold))
        return bool(libc.mallopt(m_mmap_threshold, int(self.mmap_threshold)))

    def describe(self) -> str:
        """The bounds in a producer's log line."""
        def size(value: int | None) -> str:
            return "default" if value is None else f"{value // 1024} KiB"

        return (f"glibc mmap threshold {size(self.mmap_threshold)}, trim threshold {size(self.trim_threshold)}, "
                f"{self.arena_max or 'default'} arenas, oneDNN cache {self.onednn_cache or 'default'}")


NO_BOUNDS = HeapBounds(None, None, None, None)
#: the presets that decode in windows (ONNX Runtime's, and the BF16 engine's): few buffer
#: sizes, repeated, kept in the heap below and above (mmap and trim thresholds) in two arenas
SERVING_BOUNDS = HeapBounds(SERVING_MALLOC_THRESHOLD, SERVING_MALLOC_THRESHOLD, ONNX_MALLOC_ARENA_MAX)
