"""What crosses into the model process: the engine spec, its environment, and the reports back.

Split out of :mod:`studio.jobs.isolation` because these are the plain, picklable
values both sides agree on -- :class:`EngineSpec` goes to the child, :class:`ChildMemory`
comes back on every answer -- plus the memory bounds that in-process engines use too
(:func:`tame_process_memory`). None of it starts a process.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from studio.core.errors import EngineError
from studio.engine.base import Engine

if TYPE_CHECKING:  # engines.py imports this module; the plan type is only an annotation here
    from studio.engine.presets import Preset
    from studio.jobs.engines import EnginePlan

DEFAULT_RECYCLE_AFTER = 1000
DEFAULT_CUDA_ALLOC_CONF = "expandable_segments:True"
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


#: The windowed torch engine on CPU (``bf16-cpu``): its activations are bounded by the
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


def malloc_bounds_for(preset: Preset) -> tuple[int, int | None, int]:
    """glibc's mmap threshold, arena count and oneDNN's kernel cache for a model process
    running this preset's engine."""
    if preset.engine == "onnx":
        return ONNX_MALLOC_MMAP_THRESHOLD, ONNX_MALLOC_ARENA_MAX, DEFAULT_ONEDNN_CACHE_CAPACITY
    if preset.engine == "torch" and preset.device == "cpu" and preset.precision == "bf16":
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
    the fact). Children of :class:`IsolatedEngine` get the same settings through
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


class InferenceCrashed(EngineError):
    """The model process died twice on the same request (segfault, abort, OOM kill...).

    ``reason`` is the human part (``"model process killed by SIGSEGV"``), ``exitcode``
    the child's exit status as :mod:`multiprocessing` reports it (negative = signal),
    ``signal_name`` e.g. ``"SIGSEGV"`` or ``None``. The render loop marks the sentence
    failed and goes on.
    """

    def __init__(
        self,
        reason: str,
        exitcode: int | None = None,
        signal_name: str | None = None,
        attempts: int = 2,
    ) -> None:
        self.reason = reason
        self.exitcode = exitcode
        self.signal_name = signal_name
        self.attempts = attempts
        super().__init__(reason)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason, self.exitcode, self.signal_name, self.attempts))


@dataclass(frozen=True)
class EngineSpec:
    """Everything the child needs to build the engine; picklable by construction.

    ``plan`` is built in the child by :func:`studio.jobs.engines.build_engine` (the
    same stack a render in this process would get). ``cuda_alloc_conf`` becomes
    ``PYTORCH_CUDA_ALLOC_CONF`` in the child (``None``: inherit the parent's);
    ``malloc_mmap_threshold`` and ``onednn_cache_capacity`` bound heap growth (see
    :func:`memory_env`; ``None``: library default); ``env`` adds further variables
    (and wins over the others).
    """

    plan: "EnginePlan"
    cuda_alloc_conf: str | None = DEFAULT_CUDA_ALLOC_CONF
    malloc_mmap_threshold: int | None = DEFAULT_MALLOC_MMAP_THRESHOLD
    onednn_cache_capacity: int | None = DEFAULT_ONEDNN_CACHE_CAPACITY
    malloc_arena_max: int | None = None
    env: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        return self.plan.preset

    def child_env(self) -> dict[str, str]:
        """Variables set in the child before anything heavy is imported."""
        env = memory_env(self.malloc_mmap_threshold, self.onednn_cache_capacity, self.malloc_arena_max)
        if self.cuda_alloc_conf is not None:
            env["PYTORCH_CUDA_ALLOC_CONF"] = self.cuda_alloc_conf
        env.update({str(k): str(v) for k, v in self.env})
        return env

    def build(self) -> Engine:
        """Make the (not yet loaded) engine. Runs in the child."""
        from studio.jobs.engines import build_engine

        return build_engine(self.plan.in_process())


@dataclass(frozen=True)
class ChildMemory:
    """One memory snapshot of the model process (sent with every answer).

    CUDA fields are ``None`` unless the child has initialised CUDA. ``sentences`` is
    how many sentences this child has synthesized; ``at`` is ``time.time()``.
    """

    pid: int
    rss_bytes: int
    cuda_allocated_bytes: int | None = None
    cuda_peak_bytes: int | None = None
    cuda_reserved_bytes: int | None = None
    #: whole-device use (``mem_get_info``): includes TensorRT, cuDNN and the CUDA context
    cuda_device_used_bytes: int | None = None
    sentences: int = 0
    at: float = 0.0

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> "ChildMemory":
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__})  # type: ignore[arg-type]


@dataclass(frozen=True)
class ChildEvent:
    """Something that happened to the model process (for logs and the GUI).

    ``kind``: ``"started"`` (``duration_s`` = spawn to ready), ``"crashed"`` (``at`` =
    when the parent noticed), ``"recycled"``, ``"stopped"``. ``at`` is
    ``time.monotonic()``.
    """

    kind: str
    pid: int | None
    at: float
    reason: str = ""
    duration_s: float | None = None


@dataclass(frozen=True)
class IsolationStats:
    """Counters of one :class:`IsolatedEngine` (all since construction)."""

    child_pid: int | None
    restarts: int
    recycles: int
    crashes: int
    sentences: int
    memory: ChildMemory | None
    last_start_s: float | None
