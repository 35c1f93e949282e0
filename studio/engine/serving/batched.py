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
:class:`~studio.engine.serving.buffers.BufferPool` (see :class:`PaddedBatch`) and
released right after the engine call. An engine that can take the padded
matrix directly exposes ``synthesize_padded(ids, lengths, settings)``; any
other engine gets per-item row views (no copies) through ``synthesize_batch``.
Cropping each item back to its own audio is the engine's job (its contract
says padding never leaks); the tests here check that it holds.

Defaults per device come from measurement (``bench/batching.py``; the table is in
docs/speed-notes.md, "Batching on a CPU"): on a 2-core CPU padded batches bring
nothing -- ORT already uses both cores for one item and padding adds decoder work --
so the CPU default is ``max_batch_size=1`` (the CPU strategy is
:mod:`studio.engine.serving.streams`); on CUDA, length-bucketed batches of 32
(not measured here: no GPU on the development box).

The engine-agnostic half -- :class:`BatchConfig`, padding (:func:`pad_batch`)
and the bucketing queue (:class:`Batcher`) -- lives in :mod:`studio.engine.serving.batcher`.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Callable, Sequence

import numpy as np

from studio.core.lexicon import Lexicon
from studio.engine.base import CUDA_BATCH, Engine, PendingBuild, SynthesisSettings
from studio.engine.serving.batcher import (
    BatchConfig,
    Batcher,
    BatcherStats,
    pad_batch,
)
from studio.engine.serving.buffers import BufferPool

__all__ = [
    "default_batch_config",
    "BatchedEngine",
]


#: measured defaults (see the module docstring and bench/batching.py)
_DEVICE_DEFAULTS: dict[str, BatchConfig] = {
    "cpu": BatchConfig(max_batch_size=1, max_wait_s=0.0),
    "cuda": BatchConfig(max_batch_size=CUDA_BATCH, max_wait_s=0.02, max_batch_tokens=CUDA_BATCH * 512, bucket_ratio=1.25),
}


def default_batch_config(device: str | None) -> BatchConfig:
    """The measured default for ``"cpu"``, ``"cuda"``/``"cuda:N"`` (anything else -> CPU)."""
    kind = (device or "cpu").split(":", 1)[0].lower()
    return _DEVICE_DEFAULTS.get(kind, _DEVICE_DEFAULTS["cpu"])


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

    def pending_build(self) -> PendingBuild | None:
        return self.engine.pending_build()

    def describe(self) -> str:
        return f"length-bucketed batches of up to {self.max_batch_size} on {self.device}; each: {self.engine.describe()}"

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return self.engine.text_to_ids(text, language, lexicon)

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
