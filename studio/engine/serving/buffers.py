"""Reusable scratch buffers for padded inputs and assembled audio.

Why: a render pushes thousands of sentences through the same few shapes (a padded
``[batch, longest]`` int64 id matrix, a ``[batch]`` lengths vector, a float32
output span). Allocating those afresh for every batch churns the allocator and,
on CUDA, fragments the caching allocator. :class:`BufferPool` keeps released
buffers and hands them out again.

How:

* Buffers are keyed by ``(dtype, capacity)`` where capacity is the element count
  rounded **up to a power of two** (at least ``min_elements``), so shapes that
  differ a little share one bucket and the number of distinct buffers stays small.
* :meth:`BufferPool.acquire` returns a *view* ``base[:n].reshape(shape)`` of a
  pooled 1-D array. Its contents are **uninitialised** (whatever the previous user
  left); fill it before reading. :meth:`BufferPool.release` takes that view (or
  any view of it) back. Using a view after releasing it is a bug: the memory may
  already belong to the next caller.
* The pool is bounded: the *idle* buffers it keeps never exceed ``max_bytes``;
  releasing beyond that evicts the least recently used idle buffers (a buffer
  larger than ``max_bytes`` is simply dropped on release). Buffers in use are not
  counted against the bound: the pool never refuses an ``acquire``.
* :class:`TorchBufferPool` is the same pool with torch tensors on one device
  (``"cpu"``, ``"cuda:0"``...). torch is imported only when that class is used.
  On CUDA the pool is stream-ordered like the caching allocator itself: release a
  buffer only after work that reads it has been *queued* on the stream that will
  next use it (the default single-stream use is safe).

All methods are thread-safe.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Generic, Hashable, Iterator, Sequence, TypeVar

import numpy as np

__all__ = ["PoolStats", "BufferPool", "TorchBufferPool", "round_up_pow2"]

T = TypeVar("T")

#: default bound on idle bytes kept by a pool (256 MiB)
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


def round_up_pow2(n: int, minimum: int = 1) -> int:
    """Smallest power of two >= ``max(n, minimum)``."""
    n = max(int(n), int(minimum), 1)
    return 1 << (n - 1).bit_length()


@dataclass(frozen=True)
class PoolStats:
    """A snapshot of a pool's counters.

    ``hits``: acquires served from an idle buffer; ``misses``: acquires that had to
    allocate; ``bytes_in_use``: capacity bytes of buffers currently handed out;
    ``bytes_idle``: capacity bytes kept for reuse; ``bytes_held`` = both;
    ``peak_bytes_held``: the high-water mark; ``evictions``: idle buffers dropped to
    respect ``max_bytes``.
    """

    hits: int
    misses: int
    evictions: int
    releases: int
    buffers_in_use: int
    buffers_idle: int
    bytes_in_use: int
    bytes_idle: int
    bytes_held: int
    peak_bytes_held: int
    max_bytes: int

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


def _numel(shape: Sequence[int] | int) -> tuple[tuple[int, ...], int]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    n = 1
    for s in shape:
        n *= s
    return shape, n


class _PoolBase(Generic[T]):
    """Bucketed free lists + bookkeeping; subclasses supply the array backend."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, min_elements: int = 256) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        self.max_bytes = int(max_bytes)
        self.min_elements = int(min_elements)
        self._lock = threading.Lock()
        # idle buffers, least recently released first: token -> (key, base, nbytes)
        self._idle: "OrderedDict[int, tuple[Hashable, T, int]]" = OrderedDict()
        # per-key stacks of idle tokens (LIFO: the warmest buffer first)
        self._free: dict[Hashable, list[int]] = {}
        # handed-out buffers: token -> (key, base, nbytes)
        self._in_use: dict[int, tuple[Hashable, T, int]] = {}
        self._hits = self._misses = self._evictions = self._releases = 0
        self._bytes_idle = self._bytes_in_use = self._peak = 0

    # -- backend hooks -------------------------------------------------------
    def _norm_dtype(self, dtype: Any) -> Any:
        raise NotImplementedError

    def _itemsize(self, dtype: Any) -> int:
        raise NotImplementedError

    def _alloc(self, capacity: int, dtype: Any) -> T:
        raise NotImplementedError

    def _view(self, base: T, n: int, shape: tuple[int, ...]) -> T:
        raise NotImplementedError

    def _token_of(self, array: Any) -> int:
        """Identity of the pooled allocation behind ``array`` (a view of it)."""
        raise NotImplementedError

    def _key(self, dtype: Any, capacity: int) -> Hashable:
        return (dtype, capacity)  # np.dtype / torch.dtype are hashable (no per-call strings)

    # -- public API ----------------------------------------------------------
    def acquire(self, shape: Sequence[int] | int, dtype: Any) -> T:
        """A view of ``shape``/``dtype`` on a pooled buffer; contents are uninitialised."""
        shape, n = _numel(shape)
        dtype = self._norm_dtype(dtype)
        capacity = round_up_pow2(n, self.min_elements)
        key = self._key(dtype, capacity)
        nbytes = capacity * self._itemsize(dtype)
        with self._lock:
            stack = self._free.get(key)
            if stack:
                token = stack.pop()
                _, base, nbytes = self._idle.pop(token)
                self._bytes_idle -= nbytes
                self._hits += 1
            else:
                base = None
                self._misses += 1
        if base is None:
            base = self._alloc(capacity, dtype)  # outside the lock: may be slow
            token = self._token_of(base)
        with self._lock:
            self._in_use[token] = (key, base, nbytes)
            self._bytes_in_use += nbytes
            self._peak = max(self._peak, self._bytes_in_use + self._bytes_idle)
        return self._view(base, n, shape)

    def release(self, array: Any) -> None:
        """Give back a buffer obtained from :meth:`acquire` (or any view of it)."""
        token = self._token_of(array)
        with self._lock:
            entry = self._in_use.pop(token, None)
            if entry is None:
                raise ValueError("release() of a buffer this pool did not hand out (or released twice)")
            key, base, nbytes = entry
            self._bytes_in_use -= nbytes
            self._releases += 1
            if nbytes > self.max_bytes:
                self._evictions += 1
                return
            while self._idle and self._bytes_idle + nbytes > self.max_bytes:
                old_token, (old_key, _, old_nbytes) = self._idle.popitem(last=False)
                self._free[old_key].remove(old_token)
                self._bytes_idle -= old_nbytes
                self._evictions += 1
            self._idle[token] = (key, base, nbytes)
            self._free.setdefault(key, []).append(token)
            self._bytes_idle += nbytes

    @contextlib.contextmanager
    def borrow(self, shape: Sequence[int] | int, dtype: Any) -> Iterator[T]:
        """``with pool.borrow(shape, dtype) as buf:`` -- acquire, then always release."""
        buf = self.acquire(shape, dtype)
        try:
            yield buf
        finally:
            self.release(buf)

    def owns(self, array: Any) -> bool:
        """True if ``array`` views a buffer currently handed out by this pool."""
        try:
            token = self._token_of(array)
        except (TypeError, ValueError):
            return False
        with self._lock:
            return token in self._in_use

    def clear(self) -> None:
        """Drop every idle buffer (buffers in use stay valid and may be released later)."""
        with self._lock:
            self._idle.clear()
            self._free.clear()
            self._bytes_idle = 0

    def stats(self) -> PoolStats:
        with self._lock:
            return PoolStats(
                hits=self._hits,
                misses=self._misses,
                evictions=self._evictions,
                releases=self._releases,
                buffers_in_use=len(self._in_use),
                buffers_idle=len(self._idle),
                bytes_in_use=self._bytes_in_use,
                bytes_idle=self._bytes_idle,
                bytes_held=self._bytes_in_use + self._bytes_idle,
                peak_bytes_held=self._peak,
                max_bytes=self.max_bytes,
            )

    @property
    def bytes_held(self) -> int:
        with self._lock:
            return self._bytes_in_use + self._bytes_idle


class BufferPool(_PoolBase[np.ndarray]):
    """A bounded pool of numpy buffers (see the module docstring).

    >>> pool = BufferPool()
    >>> ids = pool.acquire((4, 37), np.int64)   # uninitialised view
    >>> ids[:] = 0
    >>> pool.release(ids)
    """

    def _norm_dtype(self, dtype: Any) -> np.dtype:
        return np.dtype(dtype)

    def _itemsize(self, dtype: np.dtype) -> int:
        return dtype.itemsize

    def _alloc(self, capacity: int, dtype: np.dtype) -> np.ndarray:
        return np.empty(capacity, dtype=dtype)

    def _view(self, base: np.ndarray, n: int, shape: tuple[int, ...]) -> np.ndarray:
        return base[:n].reshape(shape)

    def _token_of(self, array: Any) -> int:
        if not isinstance(array, np.ndarray):
            raise TypeError(f"expected a numpy array, got {type(array).__name__}")
        # numpy points .base of any view straight at the array that owns the memory
        owner = array if array.base is None else array.base
        return id(owner)

    def acquire_zeros(self, shape: Sequence[int] | int, dtype: Any) -> np.ndarray:
        """Like :meth:`acquire` but zero-filled (e.g. padded id matrices)."""
        buf = self.acquire(shape, dtype)
        buf.fill(0)
        return buf


class TorchBufferPool(_PoolBase[Any]):
    """The same pool with torch tensors on one ``device`` (``"cuda"``, ``"cuda:1"``, ``"cpu"``).

    Tensors are identified by their storage's data pointer, so any view
    (``t[:3]``, ``t.view(...)``) of an acquired tensor can be released.
    """

    def __init__(
        self,
        device: Any = "cuda",
        max_bytes: int = DEFAULT_MAX_BYTES,
        min_elements: int = 256,
    ) -> None:
        import torch  # optional dependency, imported on use

        self._torch = torch
        self.device = torch.device(device)
        super().__init__(max_bytes=max_bytes, min_elements=min_elements)

    _NUMPY_TO_TORCH = {
        "int64": "int64",
        "int32": "int32",
        "float32": "float32",
        "float16": "float16",
        "bool": "bool",
        "uint8": "uint8",
    }

    def _norm_dtype(self, dtype: Any) -> Any:
        torch = self._torch
        if isinstance(dtype, torch.dtype):
            return dtype
        name = np.dtype(dtype).name
        try:
            return getattr(torch, self._NUMPY_TO_TORCH[name])
        except KeyError:
            raise TypeError(f"unsupported dtype for TorchBufferPool: {dtype!r}") from None

    def _itemsize(self, dtype: Any) -> int:
        size = getattr(dtype, "itemsize", None)  # torch >= 2.1
        return int(size) if size else self._torch.empty((), dtype=dtype).element_size()

    def _alloc(self, capacity: int, dtype: Any) -> Any:
        return self._torch.empty(capacity, dtype=dtype, device=self.device)

    def _view(self, base: Any, n: int, shape: tuple[int, ...]) -> Any:
        return base[:n].view(shape)

    def _token_of(self, array: Any) -> int:
        if not isinstance(array, self._torch.Tensor):
            raise TypeError(f"expected a torch tensor, got {type(array).__name__}")
        return array.untyped_storage().data_ptr()
