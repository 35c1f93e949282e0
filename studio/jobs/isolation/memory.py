"""Memory bounds of a process that runs a model: glibc's mmap threshold and arenas, oneDNN's cache.

Why apart: these bounds are read at process start, so a model process gets them
through its environment (:func:`memory_env`, set by :mod:`studio.jobs.isolation.process`)
and an in-process engine through :func:`tame_process_memory`; the soak benchmark
applies the same ones. Nothing here starts a process or knows an engine.
"""

from __future__ import annotations

import os
import sys

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
ONNX_MALLOC_MMAP_THRESHOLD = 1024 * 1024
ONNX_MALLOC_ARENA_MAX = 2


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
#: (849 -> 869 MiB, one step at passage 20, flat after).
WINDOWED_TORCH_MALLOC_MMAP_THRESHOLD = 32 * 1024 * 1024
WINDOWED_TORCH_ONEDNN_CACHE_CAPACITY = 4096


def malloc_bounds_for(engine: str, device: str, precision: str) -> tuple[int, int | None, int]:
    """glibc's mmap threshold, arena count and oneDNN's kernel cache for a model process
    running a preset's engine (its ``engine``, ``device`` and ``precision``)."""
    if engine == "onnx":
        return ONNX_MALLOC_MMAP_THRESHOLD, ONNX_MALLOC_ARENA_MAX, DEFAULT_ONEDNN_CACHE_CAPACITY
    if engine == "torch" and device == "cpu" and precision == "bf16":
        return WINDOWED_TORCH_MALLOC_MMAP_THRESHOLD, ONNX_MALLOC_ARENA_MAX, WINDOWED_TORCH_ONEDNN_CACHE_CAPACITY
    return DEFAULT_MALLOC_MMAP_THRESHOLD, None, DEFAULT_ONEDNN_CACHE_CAPACITY
#: oneDNN (torch's CPU convolutions) caches a primitive per input shape, 1,024 by
#: default; with every sentence a new length that is ~100 MB filled for nothing.
#: 256 still holds a few forward passes' worth of layers.
DEFAULT_ONEDNN_CACHE_CAPACITY = 256


def memory_env(
    malloc_mmap_threshold: int | None = DEFAULT_MALLOC_MMAP_THRESHOLD,
    onednn_cache_capacity: int | None = DEFAULT_ONEDNN_CACHE_CAPACITY,
    malloc_arena_max: int | None = None,
) -> dict[str, str]:
    """Environment that bounds a model process's heap growth (read at process start)."""
    env: dict[str, str] = {}
    if malloc_mmap_threshold is not None:
        env["MALLOC_MMAP_THRESHOLD_"] = str(int(malloc_mmap_threshold))
    if malloc_arena_max is not None:
        env["MALLOC_ARENA_MAX"] = str(int(malloc_arena_max))
    if onednn_cache_capacity is not None:
        env["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] = str(int(onednn_cache_capacity))
    return env


def tame_process_memory(
    malloc_mmap_threshold: int | None = DEFAULT_MALLOC_MMAP_THRESHOLD,
    onednn_cache_capacity: int | None = DEFAULT_ONEDNN_CACHE_CAPACITY,
    malloc_arena_max: int | None = None,
) -> bool:
    """Apply :func:`memory_env`'s settings to *this* process, for in-process engines.

    Call it early -- before torch runs its first convolution (oneDNN reads its cache
    size once) and before the model is loaded (the heap is not defragmented after
    the fact). Children of :class:`~studio.jobs.isolation.engine.IsolatedEngine` get the same settings through
    their environment and need no call. Returns whether glibc accepted the threshold
    (``False`` off glibc, where nothing is changed).
    """
    if onednn_cache_capacity is not None:
        os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", str(int(onednn_cache_capacity)))
    if malloc_mmap_threshold is None or not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_mmap_threshold, m_arena_max = -3, -8  # <malloc.h> M_MMAP_THRESHOLD, M_ARENA_MAX
        if malloc_arena_max is not None:
            libc.mallopt(m_arena_max, int(malloc_arena_max))
        return bool(libc.mallopt(m_mmap_threshold, int(malloc_mmap_threshold)))
    except (OSError, AttributeError):  # musl or another libc: leave it alone
        return False
