"""The one model-free engine for tests of the layers around an engine (no tests in here).

Why a fake at all, when tests use the real voice: the batcher, the stream pool and
the streaming splitter are tested on what they do with *calls* -- which items go
together, in which order, from how many threads, what happens when one fails --
and those need audio whose every sample says which item it came from, calls that
take a chosen time, and failures on demand. The engine under test is never this
one; the real voice checks the same layers elsewhere (``tests/support/voice.py``).
"""

from __future__ import annotations

import threading
import time
from typing import Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.engine.base import Engine, SynthesisSettings

_STARTED_LOCK = threading.Lock()


class FakeEngine(Engine):
    """Ids are the text's code points; an item's audio is its ids, each repeated
    ``samples_per_id`` times and multiplied by ``scale`` (so ``audio[0]`` names the
    item and ``len(audio)`` its length).

    Records the item lengths of every call in :attr:`batches` (and, when given, of
    every item as it starts in the shared ``started`` list, for engines made by a
    factory). A call sleeps ``delay_s`` plus ``delay_per_id_s`` per id; ``fail``
    makes every call raise ``error_type("boom")``, ``fail_on_length`` only a call
    holding an item of that length. Asserts that no two threads drive it at once.
    """

    name = "fake"

    def __init__(self, *, samples_per_id: int = 1, scale: float = 1.0, delay_s: float = 0.0,
                 delay_per_id_s: float = 0.0, fail: bool = False, fail_on_length: int | None = None,
                 error_type: type[Exception] = EngineError, started: list[int] | None = None) -> None:
        self.samples_per_id = samples_per_id
        self.scale = scale
        self.delay_s = delay_s
        self.delay_per_id_s = delay_per_id_s
        self.fail = fail
        self.fail_on_length = fail_on_length
        self.error_type = error_type
        self.started = started
        self.batches: list[list[int]] = []
        self.loaded = self.closed = False
        self._busy = threading.Lock()

    @property
    def sample_rate(self) -> int:
        return 1000

    def load(self) -> None:
        self.loaded = True

    def text_to_ids(self, text: str, language: str, lexicon: object = None) -> list[int]:
        return [ord(c) for c in text]

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        assert self._busy.acquire(blocking=False), "engine driven by two threads at once"
        try:
            lengths = [len(seq) for seq in ids]
            if self.started is not None:
                with _STARTED_LOCK:
                    self.started.extend(lengths)
            if self.fail or (self.fail_on_length is not None and self.fail_on_length in lengths):
                raise self.error_type("boom")
            time.sleep(self.delay_s + self.delay_per_id_s * sum(lengths))
            self.batches.append(lengths)
            return [np.repeat(np.asarray(seq, np.float32) * np.float32(self.scale), self.samples_per_id)
                    for seq in ids]
        finally:
            self._busy.release()

    def close(self) -> None:
        self.closed = True
