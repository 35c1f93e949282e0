"""Batching as a wrapper around an engine, not a flag on it.

Modelled on faster-whisper's ``BatchedInferencePipeline``: any :class:`Engine`
can be wrapped in a :class:`BatchedEngine`, which is itself an Engine, so the
render worker does not care whether it talks to a batched voice or a plain one.

Two ways in:

* :meth:`BatchedEngine.submit` -- from any thread; returns a
  :class:`concurrent.futures.Future` of the item's float32 audio. A
  :class:`Batcher` queues requests in **length buckets** (geometric, so padding
  inside a batch stays below ``bucket_ratio - 1`` of the longest item), and a
  single worker thread fires a bucket when it holds ``max_batch_size`` requests
  (or ``max_batch_tokens`` padded ids) or when its oldest request has waited
  ``max_wait_s``.
* :meth:`BatchedEngine.synthesize_many` (also its ``synthesize_batch``) --
  synchronous: sorts the items by length, cuts the sorted list into batches,
  runs them and returns the audio in the caller's order.

Each batch is padded to its longest item in id/length/mask buffers taken from a
:class:`~studio.engine.buffers.BufferPool` (see :class:`PaddedBatch`) and
released right after the engine call. An engine that can take the padded
matrix directly exposes ``synthesize_padded(ids, lengths, settings)``; any
other engine gets per-item row views (no copies) through ``synthesize_batch``.
Cropping each item back to its own audio is the engine's job (its contract
says padding never leaks); the tests here check that it holds.

Defaults per device come from measurement (``bench/batching.py``): on the
2-core CPU box padded batches bring nothing -- ORT already uses both cores for
one item and padding adds decoder work. Measured (16 sentences, 44 s of audio,
ONNX, length-sorted batches, best of 3, machine shared, load average ~7):

    batch  wall s  CPU s  x real time  speed-up  padding
        1   10.16   6.46          4.3      1.00       0%
        2    9.07   5.93          4.9      1.12       6%
        4   10.82   6.44          4.1      0.94      22%
        8   11.52   7.56          3.8      0.88      49%

so the CPU default is ``max_batch_size=1`` (the CPU strategy is
:mod:`studio.engine.cpu_streams`); on CUDA, length-bucketed batches of 32
(not measured here: no GPU on the development box).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.engine.base import Engine, SynthesisSettings
from studio.engine.buffers import BufferPool

__all__ = [
    "BatchConfig",
    "default_batch_config",
    "PaddedBatch",
    "pad_batch",
    "length_bucket",
    "BatcherStats",
    "Batcher",
    "BatchedEngine",
]

_LOGGER = logging.getLogger(__name__)

#: Piper's pad symbol ``_`` is id 0; VITS ignores anything past ``lengths``.
PAD_ID = 0


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class BatchConfig:
    """How a :class:`BatchedEngine` groups work.

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


#: measured defaults (see the module docstring and bench/batching.py)
_DEVICE_DEFAULTS: dict[str, BatchConfig] = {
    "cpu": BatchConfig(max_batch_size=1, max_wait_s=0.0),
    "cuda": BatchConfig(max_batch_size=32, max_wait_s=0.02, max_batch_tokens=32 * 512, bucket_ratio=1.25),
}


def default_batch_config(device: str | None) -> BatchConfig:
    """The measured default for ``"cpu"``, ``"cuda"``/``"cuda:N"`` (anything else -> CPU)."""
    kind = (device or "cpu").split(":", 1)[0].lower()
    return _DEVICE_DEFAULTS.get(kind, _DEVICE_DEFAULTS["cpu"])


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


# ------------------------------------------------------------------ the wrapper


class BatchedEngine(Engine):
    """Wraps any :class:`Engine` with length-bucketed batching (and is an Engine itself).

    ``max_batch_size`` / ``max_wait_s`` default to :func:`default_batch_config` for
    ``device`` (taken from ``engine.device`` when not given; CPU otherwise).
    The wrapped engine is driven from one thread at a time (an internal lock), so
    engines need not be thread-safe. ``close()`` drains the queue, stops the
    worker and closes the wrapped engine (unless ``close_engine=False``).
    """

    def __init__(
        self,
        engine: Engine,
        max_batch_size: int | None = None,
        max_wait_s: float | None = None,
        *,
        device: str | None = None,
        max_batch_tokens: int | None = None,
        bucket_ratio: float | None = None,
        pool: BufferPool | None = None,
        close_engine: bool = True,
    ) -> None:
        self.engine = engine
        dev = device if device is not None else str(getattr(engine, "device", "cpu") or "cpu")
        base = default_batch_config(dev)
        self.device = dev
        self.config = BatchConfig(
            max_batch_size=base.max_batch_size if max_batch_size is None else int(max_batch_size),
            max_wait_s=base.max_wait_s if max_wait_s is None else float(max_wait_s),
            max_batch_tokens=base.max_batch_tokens if max_batch_tokens is None else max_batch_tokens,
            bucket_ratio=base.bucket_ratio if bucket_ratio is None else float(bucket_ratio),
        )
        self.name = f"batched-{getattr(engine, 'name', '') or type(engine).__name__}"
        self.pool = pool if pool is not None else BufferPool()
        self._engine_lock = threading.Lock()
        self._close_engine = close_engine
        self._batcher = Batcher(self._run, self.config, name=f"{self.name}-worker")

    # ------------------------------------------------------------ Engine API
    @property
    def sample_rate(self) -> int:
        return self.engine.sample_rate

    @property
    def max_batch_size(self) -> int:
        return self.config.max_batch_size

    @property
    def max_wait_s(self) -> float:
        return self.config.max_wait_s

    def load(self) -> None:
        with self._engine_lock:
            self.engine.load()

    def text_to_ids(self, text: str, language: str) -> list[int]:
        return self.engine.text_to_ids(text, language)

    def synthesize_batch(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[np.ndarray]:
        return self.synthesize_many(ids, settings)

    def close(self) -> None:
        self._batcher.close()
        if self._close_engine:
            with self._engine_lock:
                self.engine.close()

    # ------------------------------------------------------------ batching
    def submit(
        self,
        ids: Sequence[int],
        settings: SynthesisSettings,
        callback: Callable[[Future], Any] | None = None,
    ) -> Future:
        """Queue one id sequence from any thread; the Future gives its float32 audio."""
        return self._batcher.submit(ids, settings, callback)

    def submit_text(
        self,
        text: str,
        language: str,
        settings: SynthesisSettings,
        callback: Callable[[Future], Any] | None = None,
    ) -> Future:
        """:meth:`submit` after the voice's front end (phonemized on the caller's thread)."""
        return self.submit(self.text_to_ids(text, language), settings, callback)

    def synthesize_many(
        self, list_of_ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[np.ndarray]:
        """Synchronously: sort by length, batch, run, and return audio in input order."""
        n = len(list_of_ids)
        if n == 0:
            return []
        cfg = self.config
        lens = [len(s) for s in list_of_ids]
        order = sorted(range(n), key=lambda i: lens[i], reverse=True)
        out: list[np.ndarray | None] = [None] * n
        start = 0
        while start < n:
            # longest first, so the first item of a group fixes its padded width
            longest = lens[order[start]]
            limit = cfg.max_batch_size
            if cfg.max_batch_tokens is not None:
                limit = max(1, min(limit, cfg.max_batch_tokens // max(longest, 1)))
            # do not mix lengths further apart than one bucket ratio
            shortest_ok = longest / cfg.bucket_ratio
            end = start + 1
            while end < n and end - start < limit and lens[order[end]] >= shortest_ok:
                end += 1
            group = order[start:end]
            seqs = [list_of_ids[i] for i in group]
            self._batcher.record(len(group), sum(lens[i] for i in group), len(group) * longest, "full")
            for i, audio in zip(group, self._run(seqs, settings)):
                out[i] = audio
            start = end
        return out  # type: ignore[return-value]

    def stats(self) -> BatcherStats:
        return self._batcher.stats()

    def pending(self) -> int:
        return self._batcher.pending()

    # ------------------------------------------------------------ execution
    def _run(self, seqs: list[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        """One engine call for one group; padded inputs live in pooled buffers."""
        if len(seqs) == 1:
            # nothing to pad: hand the sequence straight to the engine
            with self._engine_lock:
                return list(self.engine.synthesize_batch(seqs, settings))
        with pad_batch(seqs, self.pool) as batch, self._engine_lock:
            padded = getattr(self.engine, "synthesize_padded", None)
            if padded is not None:
                return list(padded(batch.ids, batch.lengths, settings))
            return list(self.engine.synthesize_batch(batch.rows(), settings))
