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
#: glibc's default *dynamic* threshold rises (up to 32 MiB) after the first large
#: free, after which torch's variable-sized activation buffers land in the heap,
#: fragment it and are never returned. Measured with the torch engine on CPU (2
#: threads), 60 passages of ~350 chars (5 sentences each), RSS growth after a
#: 10-passage warm-up: glibc default +114 % (1.2 -> 3.4 GB, +36 MB per passage and
#: no plateau in sight); 1 MiB +4.7 %; 128 KiB +2.5 % (976 MB at the end); 4 MiB
#: +9.8 % over 100 passages. Wall time was the same within noise (179 s vs 176 s);
#: the price is system time for page faults on fresh mappings (about 2x).
DEFAULT_MALLOC_MMAP_THRESHOLD = 128 * 1024
#: ONNX Runtime keeps its tensors in its own arena, so only the Python side's arrays
#: (a window's audio, 0.4 MB; a sentence's, a few MB) meet glibc. With 128 KiB every
#: one of them is a fresh mapping: a 3,500-character render spent 4.9-5.7 s in the
#: kernel instead of 0.8-0.9 s (17.7-20.1 s wall instead of 15.1-15.2 s). With the
#: library default the dynamic threshold climbs and the heap fragments (ONNX soak,
#: 40 passages: +28 %). 1 MiB: 1.6-1.9 s system time, 14.4-14.9 s wall; 4 MiB grew
#: +29 % again. With 1 MiB the 20-passage soak still stepped up +27 % in one run of
#: two: a new glibc arena for ORT's second thread; two arenas at most: three runs of
#: three within +1.6 %, same speed.
ONNX_MALLOC_ARENA_MAX = 2
#: What that 1 MiB threshold still cost (issue 23, whole ``int8-cpu`` renders of 1,543 words,
#: quiet 2-core machine): ONNX Runtime allocates its convolutions' scratch (1-10 MB) with
#: ``operator new`` on every run, outside its arena, so each window mapped and unmapped
#: ~5.6 GB in all: 1.0-1.6 million page faults and 2.7-2.9 s of system time against the
#: piper CLI's 0.5 s. Served from the heap (threshold 32 MiB, glibc's ceiling) the
#: system time fell to 1.3-1.5 s; glibc then still returned the heap's freed top to the
#: kernel past 128 KiB (the trim threshold) and faulted it in again: with a 32 MiB trim
#: threshold 0.9 s, 0.26 million faults, wall 17.2-18.0 s against 18.8-18.9 s, peak RSS
#: 760-770 MiB against 722-727 MiB. 64 and 128 MiB trim thresholds saved no more and
#: peaked higher (815-903 MiB).
SERVING_MALLOC_THRESHOLD = 32 * 1024 * 1024


#: The BF16 windowed decoder on CPU (``bf16-cpu``; measured with its first, all-torch engine,
#: kept for its ONNX-encoder + scripted-decoder successor): its activations are bounded by the
#: window and repeat a few dozen sizes (spans rounded to 32 frames), so the heap reuses
#: them; what hurts is mapping them afresh and recompiling kernels. 383 words of prose,
#: in-process, CPU seconds (user + system), loaded 2-core machine: glibc default +
#: oneDNN's 1,024 kernels 14.3 + 1.6; 128 KiB threshold 17.4 + 10.4; 1 MiB and two arenas
#: 14.5 + 7.7 (the last stage's activations are 7-15 MB); oneDNN cache 256 17.3 + 2.1.
#: So: everything below 32 MiB (glibc's own ceiling) from the heap, two arenas (one per
#: stream), room for every shape's kernels: 16.7 + 2.75 in the model process. Soak, these
#: bounds, 30 passages of 200-400 characters: +2.4 % RSS after a 10-passage warm-up
#: (849 -> 869 MiB, one step at passage 20, flat after). Its second arena then still
#: grew a 64 MiB heap and deleted it again past the default trim threshold ~1,100 times
#: in the whole render of issue 23 (3.1-3.4 s of system time); with the serving presets'
#: 32 MiB trim threshold 1.4-2.1 s.
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
