"""The parent's side of the model process: :class:`IsolatedEngine`, an engine whose model runs in a child.

Why an engine: the render loop, the preview and the benchmark take any
:class:`~studio.engine.base.Engine`, so isolation is a wrapper they never see. This
module keeps the request / retry / recycle policy; the design (spawn, front end in
the child, death noticed at once, recycling, live memory) is described in
:mod:`studio.stack.isolation`.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import threading
import time
import weakref
from collections import OrderedDict, deque
from typing import Any, Callable, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, PendingBuild, SynthesisSettings
from studio.stack.isolation.process import ChildDied, ChildProcess, death_of, reap, spawn_child
from studio.stack.isolation.reports import ChildEvent, ChildMemory, InferenceCrashed, IsolationStats
from studio.stack.isolation.spec import DEFAULT_RECYCLE_AFTER, EngineSpec

_LOGGER = logging.getLogger(__name__)

_CACHE_SIZE = 4096


class IsolatedEngine(Engine):
    """An :class:`Engine` whose model runs in a child process (see the module doc).

    ``recycle_after``: replace the child after this many sentences (``None``/0: never).
    ``timeout_s``: a request that takes longer counts as a death (the child is
    killed); ``None`` = wait forever. ``start_timeout_s`` bounds model loading.
    ``on_event`` is called (in the requesting thread) with each :class:`ChildEvent`.
    """

    def __init__(
        self,
        spec: EngineSpec,
        *,
        recycle_after: int | None = DEFAULT_RECYCLE_AFTER,
        timeout_s: float | None = None,
        start_timeout_s: float = 600.0,
        poll_interval: float = 0.1,
        on_event: Callable[[ChildEvent], None] | None = None,
    ) -> None:
        self.spec = spec
        self.name = spec.label  # replaced by the real engine's name once it is loaded
        self.recycle_after = recycle_after
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self.poll_interval = poll_interval
        self.on_event = on_event
        self.events: deque[ChildEvent] = deque(maxlen=256)

        self._ctx = mp.get_context("spawn")
        self._lock = threading.RLock()
        self._holder: dict[str, Any] = {"child": None}
        self._finalizer = weakref.finalize(self, reap, self._holder)
        self._closed = False
        self._sample_rate: int | None = None
        self._memory: ChildMemory | None = None
        self._ids: OrderedDict[tuple[str, str, str], tuple[int, ...]] = OrderedDict()
        self._texts: OrderedDict[tuple[int, ...], str] = OrderedDict()
        self._restarts = 0
        self._recycles = 0
        self._crashes = 0
        self._sentences = 0
        self._last_start_s: float | None = None
        self._after_crash = False  # the next start replaces a dead child

    # ----------------------------------------------------------------- Engine API

    @property
    def sample_rate(self) -> int:
        if self._sample_rate is None:
            self.load()
        assert self._sample_rate is not None
        return self._sample_rate

    def load(self) -> None:
        with self._lock:
            self._check_open()
            if self._child is None:
                self._start()

    def pending_build(self) -> PendingBuild | None:
        """Asked of the stack the child will build, constructed here and not loaded (cheap).

        A spec that says ``probe_builds=False`` (the torch presets: they build
        nothing on disk, and constructing one would import torch and coqui-tts into
        this, the app's, process for seconds) is not asked.
        """
        with self._lock:
            if self._child is not None or not self.spec.probe_builds:
                return None
        probe = self.spec.build()
        try:
            return probe.pending_build()
        finally:
            probe.close()

    def describe(self) -> str:
        with self._lock:
            inner = self._request(("describe",))
        return f"{inner}; model in a child process (restarted if it crashes)"

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        key = (text, language, lexicon.digest() if lexicon else "")
        with self._lock:
            cached = self._ids.get(key)
            if cached is None:
                cached = tuple(self._request(("ids", text, language, lexicon or None)))
                self._remember(key, cached)
            else:
                self._ids.move_to_end(key)
            return list(cached)

    def synthesize_batch(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[np.ndarray]:
        """Synthesize in the child; one restart + retry on a crash, then :class:`InferenceCrashed`."""
        if not ids:
            return []
        with self._lock:
            items = [(self._texts.get(tuple(seq)), list(seq)) for seq in ids]
            audio = self._request(("synth", items, settings), sentences=len(items))
            self._sentences += len(items)
            return [np.asarray(a, dtype=np.float32) for a in audio]

    def synthesize_each(
        self, ids_list: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[np.ndarray | InferenceCrashed]:
        """Like :meth:`synthesize_batch`, but a crash fails only the item that causes it.

        The batch is tried as a batch (with its one retry); if it crashes twice, each
        item is tried alone (again with one retry), so the result holds audio for every
        healthy item and an :class:`InferenceCrashed` for each poisonous one. Other
        errors (:class:`EngineError` from the engine itself, a closed engine) propagate.
        """
        try:
            return list(self.synthesize_batch(ids_list, settings))
        except InferenceCrashed as crashed:
            if len(ids_list) == 1:
                return [crashed]
            _LOGGER.warning("batch of %d crashed twice (%s); retrying one by one",
                            len(ids_list), crashed.reason)
        results: list[np.ndarray | InferenceCrashed] = []
        for seq in ids_list:
            try:
                results.append(self.synthesize_batch([seq], settings)[0])
            except InferenceCrashed as crashed:
                results.append(crashed)
        return results

    def close(self) -> None:
        """Stop the child (politely if idle, at once if a request is running). Idempotent."""
        self._closed = True
        if self._lock.acquire(blocking=False):
            try:
                child = self._take_child()
                if child is not None:
                    child.stop()
                    self._event("stopped", child.pid, "closed")
            finally:
                self._lock.release()
        else:
            # A request is in flight in another thread: kill the child; that thread
            # sees the death, notices ``_closed`` and raises instead of restarting.
            child = self._holder.get("child")
            if child is not None:
                try:
                    child.proc.kill()
                except Exception:  # pragma: no cover
                    pass

    # ----------------------------------------------------------- isolation extras

    @property
    def child_pid(self) -> int | None:
        child = self._holder.get("child")
        return None if child is None else child.pid

    @property
    def restarts(self) -> int:
        """How many times a dead child was replaced (recycling not counted)."""
        return self._restarts

    @property
    def memory(self) -> ChildMemory | None:
        """The child's memory as of its last answer (``None`` before the first)."""
        return self._memory

    def memory_now(self) -> ChildMemory | None:
        """The child's RSS right now (psutil, no round trip; CUDA fields from the last answer)."""
        child = self._holder.get("child")
        if child is None or child.pid is None:
            return None
        try:
            import psutil

            rss = int(psutil.Process(child.pid).memory_info().rss)
        except Exception as exc:  # noqa: BLE001 - the child may be gone between two readings
            _LOGGER.debug("cannot read the model process's memory (%s); showing the last answer's", exc)
            return self._memory
        last = self._memory
        return ChildMemory(
            pid=child.pid,
            rss_bytes=rss,
            cuda_allocated_bytes=last.cuda_allocated_bytes if last else None,
            cuda_peak_bytes=last.cuda_peak_bytes if last else None,
            cuda_reserved_bytes=last.cuda_reserved_bytes if last else None,
            cuda_device_used_bytes=last.cuda_device_used_bytes if last else None,
            sentences=child.served,
            at=time.time(),
        )

    def stats(self) -> IsolationStats:
        return IsolationStats(
            child_pid=self.child_pid,
            restarts=self._restarts,
            recycles=self._recycles,
            crashes=self._crashes,
            sentences=self._sentences,
            memory=self._memory,
            last_start_s=self._last_start_s,
        )

    def recycle(self, reason: str = "on demand") -> None:
        """Replace the child by a fresh one now (waits for a running request)."""
        with self._lock:
            self._check_open()
            child = self._take_child()
            if child is not None:
                child.stop()
                self._recycles += 1
                self._event("recycled", child.pid, reason)
            self._start()

    # ------------------------------------------------------------------ internals

    @property
    def _child(self) -> ChildProcess | None:
        return self._holder.get("child")

    def _take_child(self) -> ChildProcess | None:
        child = self._holder.get("child")
        self._holder["child"] = None
        return child

    def _check_open(self) -> None:
        if self._closed:
            raise EngineError("the model process was closed")

    def _event(self, kind: str, pid: int | None, reason: str = "", duration_s: float | None = None) -> None:
        event = ChildEvent(kind, pid, time.monotonic(), reason, duration_s)
        self.events.append(event)
        level = logging.WARNING if kind == "crashed" else logging.INFO
        _LOGGER.log(level, "model process %s: %s%s%s", pid, kind,
                    f" ({reason})" if reason else "",
                    f" in {duration_s:.2f} s" if duration_s is not None else "")
        if self.on_event is not None:
            self.on_event(event)

    def _remember(self, key: tuple[str, str, str], ids: tuple[int, ...]) -> None:
        self._ids[key] = ids
        self._texts[ids] = key[0]
        self._texts.move_to_end(ids)
        while len(self._ids) > _CACHE_SIZE:
            self._ids.popitem(last=False)
        while len(self._texts) > _CACHE_SIZE:
            self._texts.popitem(last=False)

    def _start(self) -> None:
        """Spawn a child and wait until its engine is loaded."""
        t0 = time.monotonic()
        child = spawn_child(self._ctx, self.spec)
        try:
            reply = child.receive(self.start_timeout_s, self.poll_interval)
        except ChildDied as died:
            child.kill()
            raise EngineError(f"the model could not be started: {died.reason}") from None
        if reply[0] != "ready":
            child.stop(grace_s=2.0)
            raise EngineError(f"the model could not be started: {reply[1]}")
        if self._closed:  # closed from another thread while we were starting
            child.stop(grace_s=2.0)
            raise EngineError("the model process was closed")
        _, rate, name, mem = reply
        self._sample_rate = int(rate)
        self.name = name
        self._memory = ChildMemory.from_wire(mem)
        self._holder["child"] = child
        self._last_start_s = time.monotonic() - t0
        reason = ""
        if self._after_crash:
            self._after_crash = False
            self._restarts += 1
            reason = "replacing a crashed one"
        self._event("started", child.pid, reason, duration_s=self._last_start_s)

    def _request(self, msg: tuple[Any, ...], *, sentences: int = 0) -> Any:
        """Send one request; on a child death restart and retry once."""
        self._check_open()
        attempt = 0
        while True:
            attempt += 1
            child = self._child
            if child is not None and sentences and self.recycle_after and child.served >= self.recycle_after:
                self.recycle(f"after {child.served} sentences")
                child = self._child
            if child is None:
                self._start()
                child = self._child
                assert child is not None
            try:
                try:
                    child.conn.send(msg)
                except (BrokenPipeError, ConnectionResetError, EOFError):
                    child.proc.join(1.0)
                    raise death_of(child.proc.exitcode) from None
                reply = child.receive(self.timeout_s, self.poll_interval)
            except BaseException as exc:
                if not isinstance(exc, ChildDied):
                    # interrupted (KeyboardInterrupt, ...) with a request in flight: the
                    # child's answer would arrive for the *next* request, so drop it
                    self._take_child()
                    child.kill()
                    self._event("stopped", child.pid, f"request interrupted ({type(exc).__name__})")
                    raise
                died = exc
                self._take_child()
                child.kill()
                if self._closed:
                    raise EngineError("the model process was closed") from None
                self._crashes += 1
                self._after_crash = True
                self._event("crashed", child.pid, died.reason)
                if attempt >= 2:
                    raise InferenceCrashed(died.reason, died.exitcode, died.signal_name, attempt) from None
                continue
            if reply[0] == "error":
                raise EngineError(str(reply[1]))
            _, payload, mem = reply
            child.served += sentences
            self._memory = ChildMemory.from_wire(mem)
            return payload
