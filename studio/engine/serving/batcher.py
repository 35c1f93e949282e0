"""Padding and length buckets: the machinery under :class:`~studio.engine.serving.batched.BatchedEngine`.

Split from :mod:`studio.engine.serving.batched` so the wrapper (an :class:`Engine` that
picks measured per-device defaults) stays separate from the engine-agnostic
parts it drives, which know nothing about voices:

* :func:`pad_batch` pads id sequences into id/length/mask buffers taken from a
  :class:`~studio.engine.serving.buffers.BufferPool` (see :class:`PaddedBatch`), so a
  long render reuses the same memory instead of allocating per batch.
* :class:`Batcher` queues requests in **length buckets** (geometric, so padding
  inside a batch stays below ``bucket_ratio - 1`` of the longest item), and a
  single worker thread fires a bucket when it holds ``max_batch_size`` requests
  (or ``max_batch_tokens`` padded ids) or when its oldest request has waited
  ``max_wait_s``.

The engine side (:class:`~studio.engine.serving.batched.BatchedEngine`) is in
:mod:`studio.engine.serving.batched`; import these names from here.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.engine.base import SynthesisSettings
from studio.engine.serving.buffers import BufferPool

__all__ = [
    "PAD_ID",
    "BatchConfig",
    "PaddedBatch",
    "pad_batch",
    "length_bucket",
    "BatcherStats",
    "Batcher",
    "RunBatch",
]


#: Piper's pad symbol ``_`` is id 0; VITS ignores anything past ``lengths``.
PAD_ID = 0


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class BatchConfig:
    """How a :class:`~studio.engine.serving.batched.BatchedEngine` groups work.

    ``max_batch_size``: items per engine call (1 = no batching).
    ``max_wait_s``: how long a queued request may wait for company. With 0 a lonely
    request runs at once, but requests that arrive while the worker is busy still
    queue up and leave together (continuous batching).
    ``max_batch_tokens``: optional cap on ``batch * longest`` padded ids (GPU memory).
    ``bucket_ratio``: geometric width of a length bucket (1.25: lengths 80..100 share one).
    """

    max_batch_size: int = 1
    max_wait_s: float = 0.0
    max_batch_tokens: int | None = None
    bucket_ratio: float = 1.25

    def __post_init__(self) -> None:
        if self.max_batch_size < 1:
            raise ValueError("max_batch_size must be >= 1")
        if self.max_wait_s < 0:
            raise ValueError("max_wait_s must be >= 0")
        if self.bucket_ratio <= 1.0:
            raise ValueError("bucket_ratio must be > 1")
        if self.max_batch_tokens is not None and self.max_batch_tokens < 1:
            raise ValueError("max_batch_tokens must be >= 1")


def length_bucket(length: int, ratio: float = 1.25, floor: int = 16) -> int:
    """Geometric bucket index: lengths within a factor ``ratio`` share a bucket.

    Everything up to ``floor`` ids is bucket 0 (short items pad cheaply anyway).
    """
    if length <= floor:
        return 0
    return 1 + int(math.log(length / floor) / math.log(ratio))


# ---------------------------------------------------------------------- padding


@dataclass
class PaddedBatch:
    """A batch padded to its longest item, in buffers borrowed from a pool.

    ``ids[b, :lengths[b]]`` is item ``b``; the rest of the row is ``PAD_ID``.
    ``mask[b, t]`` is True on real ids. All three arrays are pool views: call
    :meth:`release` (or use the batch as a context manager) when the engine call
    is done, and do not touch them afterwards.
    """

    ids: np.ndarray
    lengths: np.ndarray
    mask: np.ndarray
    pool: BufferPool | None = None
    _released: bool = field(default=False, repr=False)

    @property
    def size(self) -> int:
        return int(self.ids.shape[0])

    @property
    def max_len(self) -> int:
        return int(self.ids.shape[1])

    def rows(self) -> list[np.ndarray]:
        """Each item's real ids as a view of the padded matrix (no copy)."""
        return [self.ids[b, : int(n)] for b, n in enumerate(self.lengths)]

    def release(self) -> None:
        if self._released or self.pool is None:
            self._released = True
            return
        self._released = True
        for arr in (self.ids, self.lengths, self.mask):
            self.pool.release(arr)

    def __enter__(self) -> "PaddedBatch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def pad_batch(
    seqs: Sequence[Sequence[int]], pool: BufferPool | None = None, pad_id: int = PAD_ID
) -> PaddedBatch:
    """Pad id sequences into ``[B, T]`` int64 ids, ``[B]`` int64 lengths and a bool mask."""
    if not seqs:
        raise ValueError("empty batch")
    lens = [len(s) for s in seqs]
    if min(lens) == 0:
        raise EngineError("cannot synthesize an empty id sequence")
    b, t = len(seqs), max(lens)
    if pool is not None:
        ids = pool.acquire((b, t), np.int64)
        lengths = pool.acquire((b,), np.int64)
        mask = pool.acquire((b, t), np.bool_)
    else:
        ids = np.empty((b, t), np.int64)
        lengths = np.empty((b,), np.int64)
        mask = np.empty((b, t), np.bool_)
    ids.fill(pad_id)
    mask.fill(False)
    for row, (seq, n) in enumerate(zip(seqs, lens)):
        ids[row, :n] = seq
        mask[row, :n] = True
        lengths[row] = n
    return PaddedBatch(ids=ids, lengths=lengths, mask=mask, pool=pool)


# ---------------------------------------------------------------------- batcher


@dataclass
class _Request:
    ids: Sequence[int]
    length: int
    settings: SynthesisSettings
    future: Future
    t_submit: float


@dataclass(frozen=True)
class BatcherStats:
    """Counters of a :class:`Batcher` (or of a BatchedEngine's synchronous path too)."""

    batches: int
    items: int
    real_ids: int
    padded_ids: int
    fired_full: int
    fired_timeout: int
    fired_flush: int

    @property
    def mean_batch_size(self) -> float:
        return self.items / self.batches if self.batches else 0.0

    @property
    def padding_overhead(self) -> float:
        """Padded ids per real id minus one (0.0 = no padding at all)."""
        return self.padded_ids / self.real_ids - 1.0 if self.real_ids else 0.0


RunBatch = Callable[[list[Sequence[int]], SynthesisSettings], list[Any]]


class Batcher:
    """Queues requests in length buckets and runs them in batches on a worker thread.

    ``run_batch(list_of_ids, settings) -> list_of_results`` is called on the worker
    thread with requests that share settings and a length bucket, at most
    ``max_batch_size`` (and ``max_batch_tokens``) of them, oldest first. A bucket
    fires when it is full or when its oldest request has waited ``max_wait_s``.
    """

    def __init__(self, run_batch: RunBatch, config: BatchConfig, *, name: str = "batcher") -> None:
        self._run_batch = run_batch
        self.config = config
        self._cond = threading.Condition()
        self._buckets: dict[Hashable, deque[_Request]] = {}
        self._pending = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self._name = name
        self._counts = dict(batches=0, items=0, real_ids=0, padded_ids=0,
                            fired_full=0, fired_timeout=0, fired_flush=0)

    # ---------------------------------------------------------------- public
    def submit(
        self,
        ids: Sequence[int],
        settings: SynthesisSettings,
        callback: Callable[[Future], Any] | None = None,
    ) -> Future:
        """Queue one id sequence; the future resolves to ``run_batch``'s result for it."""
        n = len(ids)
        if n == 0:
            raise EngineError("cannot synthesize an empty id sequence")
        fut: Future = Future()
        if callback is not None:
            fut.add_done_callback(callback)
        req = _Request(ids=ids, length=n, settings=settings, future=fut, t_submit=time.monotonic())
        key = (settings, length_bucket(n, self.config.bucket_ratio))
        with self._cond:
            if self._closed:
                raise RuntimeError("batcher is closed")
            self._buckets.setdefault(key, deque()).append(req)
            self._pending += 1
            self._ensure_worker()
            self._cond.notify()
        return fut

    def pending(self) -> int:
        with self._cond:
            return self._pending

    def close(self, *, cancel_pending: bool = False, timeout: float | None = None) -> None:
        """Stop accepting requests; run (default) or cancel what is queued, join the worker."""
        with self._cond:
            self._closed = True
            if cancel_pending:
                for bucket in self._buckets.values():
                    for req in bucket:
                        req.future.cancel()
                self._buckets.clear()
                self._pending = 0
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def stats(self) -> BatcherStats:
        with self._cond:
            return BatcherStats(**self._counts)

    def record(self, items: int, real_ids: int, padded_ids: int, why: str) -> None:
        """Count one executed batch (also used by BatchedEngine's synchronous path)."""
        with self._cond:
            c = self._counts
            c["batches"] += 1
            c["items"] += items
            c["real_ids"] += real_ids
            c["padded_ids"] += padded_ids
            c["fired_" + why] += 1

    # ---------------------------------------------------------------- worker
    def _ensure_worker(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()

    def _is_full(self, bucket: deque[_Request]) -> bool:
        cfg = self.config
        if len(bucket) >= cfg.max_batch_size:
            return True
        if cfg.max_batch_tokens is not None:
            longest = max(r.length for r in bucket)
            return len(bucket) * longest >= cfg.max_batch_tokens
        return False

    def _take(self, key: Hashable) -> list[_Request]:
        """Pop up to a batch's worth (oldest first) from one bucket. Lock held."""
        bucket = self._buckets[key]
        cfg = self.config
        batch: list[_Request] = []
        longest = 0
        while bucket and len(batch) < cfg.max_batch_size:
            nxt = bucket[0]
            new_longest = max(longest, nxt.length)
            if (
                batch
                and cfg.max_batch_tokens is not None
                and (len(batch) + 1) * new_longest > cfg.max_batch_tokens
            ):
                break
            batch.append(bucket.popleft())
            longest = new_longest
        if not bucket:
            del self._buckets[key]
        self._pending -= len(batch)
        return batch

    def _next_batch(self) -> tuple[list[_Request], str] | None:
        """Block until a batch is due; None when closed and drained."""
        with self._cond:
            while True:
                if not self._buckets:
                    if self._closed:
                        return None
                    self._cond.wait()
                    continue
                # an overdue request goes first (so a busy bucket cannot starve a
                # lonely one), then any full bucket, else sleep until the next deadline
                oldest_key = min(self._buckets, key=lambda k: self._buckets[k][0].t_submit)
                due = self._buckets[oldest_key][0].t_submit + self.config.max_wait_s
                now = time.monotonic()
                if now >= due:
                    why = "full" if self._is_full(self._buckets[oldest_key]) else "timeout"
                    return self._take(oldest_key), why
                for key, bucket in self._buckets.items():
                    if self._is_full(bucket):
                        return self._take(key), "full"
                if self._closed:
                    return self._take(oldest_key), "flush"
                self._cond.wait(due - now)

    def _loop(self) -> None:
        while True:
            got = self._next_batch()
            if got is None:
                return
            batch, why = got
            live = [r for r in batch if r.future.set_running_or_notify_cancel()]
            if not live:
                continue
            settings = live[0].settings
            longest = max(r.length for r in live)
            self.record(len(live), sum(r.length for r in live), len(live) * longest, why)
            try:
                results = self._run_batch([r.ids for r in live], settings)
                if len(results) != len(live):
                    raise EngineError(
                        f"engine returned {len(results)} results for a batch of {len(live)}"
                    )
            except BaseException as exc:  # noqa: BLE001 - delivered to every waiter
                for r in live:
                    r.future.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
                continue
            for r, res in zip(live, results):
                r.future.set_result(res)
