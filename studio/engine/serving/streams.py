"""Several single-thread engines fed from one queue: the fastest way to fill a small CPU.

Why not batches or one big session: on a 2-core CPU, batching sentences is *slower*
than one at a time (items are padded to the longest, and the decoder runs over the
padding), and one session's two intra-op threads spend much of their time waiting on
each other in the many small ops of a VITS graph. N sessions with one intra-op thread
each, one per physical core, fed longest-first from one queue, keep every core busy
on useful work (measured 1.2-1.35x one 2-thread session; see ``bench/cpu_presets.py``).
Python threads are enough: ONNX Runtime releases the GIL while it runs.

Longest-first: the slowest sentence starts first, so the last core to finish is not
left running a long sentence alone at the end.

With engines that decode in windows (:mod:`studio.engine.decode_windows`, the ONNX CPU
engines) the unit of work is a window, not a sentence
(:mod:`studio.engine.serving.window_jobs`): one long sentence spreads over all
streams, and the last sentence of a batch no longer leaves a core idle.

Results come back as ``(index, audio)`` the moment each sentence is done (a generator),
so a render job can store each sentence as soon as it exists; the order is whatever
finished first, keyed by the input index.
"""

from __future__ import annotations

import os
import queue
import threading
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, PendingBuild, SynthesisSettings
from studio.engine.serving.window_jobs import Job, WindowJobs
from studio.engine.decode_windows import finish, windowed


def physical_cores() -> int:
    """Physical CPU cores (logical count if psutil cannot tell), at least 1."""
    try:
        import psutil

        n = psutil.cpu_count(logical=False)
    except Exception:  # psutil missing or unsupported platform
        n = None
    return max(1, n or os.cpu_count() or 1)


@dataclass(frozen=True)
class StreamResult:
    """One finished sentence."""

    index: int
    audio: np.ndarray
    #: audio samples per input id (None if the engine has no alignment output)
    samples_per_id: np.ndarray | None
    #: which stream (0..N-1) rendered it (its last window, when windowed)
    stream: int
    #: windowed engines: the stream that decoded each window, in order
    windows: tuple[int, ...] = ()


_STOP = object()


class MultiStreamSynthesizer:
    """``streams`` engines, each built by ``engine_factory()``, one worker thread each.

    ``engine_factory`` must return a *new*, single-threaded engine (the render path's
    comes from :func:`studio.stack.build.build_engine`, the one factory; this module
    knows no backend); every stream owns its engine. ``streams`` defaults to the number of physical cores.

    Use :meth:`synthesize` (a generator of ``(index, audio)``), or
    :meth:`synthesize_all` for an ordered list. One call at a time: a second concurrent call raises EngineError.
    """

    def __init__(self, engine_factory: Callable[[], Engine], streams: int | None = None) -> None:
        self.streams = physical_cores() if streams is None else int(streams)
        if self.streams < 1:
            raise EngineError(f"streams must be >= 1, got {streams}")
        self._factory = engine_factory
        self._engines: list[Engine] = []
        self._lock = threading.Lock()
        self._call_lock = threading.Lock()

    # ----------------------------------------------------------------- life cycle

    @property
    def engines(self) -> list[Engine]:
        return list(self._engines)

    @property
    def sample_rate(self) -> int:
        self.load()
        return self._engines[0].sample_rate

    def load(self) -> None:
        """Create and load all engines (one after the other: the first may build caches)."""
        with self._lock:
            while len(self._engines) < self.streams:
                engine = self._factory()
                engine.load()
                self._engines.append(engine)

    def pending_build(self) -> PendingBuild | None:
        """What the first stream's load builds once (the others then find it cached)."""
        with self._lock:
            if self._engines:
                return None
            probe = self._factory()  # constructed, not loaded: cheap
        try:
            return probe.pending_build()
        finally:
            probe.close()

    def close(self) -> None:
        with self._lock:
            engines, self._engines = self._engines, []
        for engine in engines:
            engine.close()

    def __enter__(self) -> "MultiStreamSynthesizer":
        self.load()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        self.load()
        return self._engines[0].text_to_ids(text, language, lexicon)

    # ------------------------------------------------------------------ synthesis

    def synthesize(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(index, audio)`` for every item, in completion order."""
        for result in self.synthesize_results(ids, settings):
            yield result.index, result.audio

    def synthesize_all(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        """All items, in input order."""
        out: list[np.ndarray | None] = [None] * len(ids)
        for index, audio in self.synthesize(ids, settings):
            out[index] = audio
        return [a for a in out if a is not None]

    def synthesize_results(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> Iterator[StreamResult]:
        """Like :meth:`synthesize` with alignments and the stream that did the work.

        If a stream fails, the other streams stop taking new items and the error is
        raised from the generator. Closing the generator early stops the workers
        after their current sentence.
        """
        items = [list(seq) for seq in ids]
        if not items:
            return
        self.load()
        if not self._call_lock.acquire(blocking=False):
            # waiting here could deadlock a caller that still holds an unfinished generator
            raise EngineError("this MultiStreamSynthesizer is already synthesizing; finish or close that call first")
        try:
            yield from self._run(items, settings)
        finally:
            self._call_lock.release()

    def _run(self, items: list[list[int]], settings: SynthesisSettings) -> Iterator[StreamResult]:
        done: queue.SimpleQueue = queue.SimpleQueue()
        stop = threading.Event()
        if all(windowed(e) for e in self._engines):
            jobs = WindowJobs(items)
            engines = self._engines
            hop = int(getattr(getattr(engines[0], "config", None), "hop_length", 256))

            def work(stream: int, engine: Engine) -> None:
                try:
                    while not stop.is_set():
                        job = jobs.take(encode_first=not engine.decoding_ready())
                        if job is None:
                            break
                        _window_job(engine, jobs, job, items, settings, stream, hop, done)
                except BaseException as exc:  # handed to the consumer
                    stop.set()
                    jobs.stop()
                    done.put(exc)
                finally:
                    done.put(_STOP)
        else:
            todo: queue.SimpleQueue[int] = queue.SimpleQueue()
            for index in sorted(range(len(items)), key=lambda i: len(items[i]), reverse=True):
                todo.put(index)
            engines = self._engines[: min(self.streams, len(items))]
            jobs = None

            def work(stream: int, engine: Engine) -> None:
                try:
                    while not stop.is_set():
                        try:
                            index = todo.get_nowait()
                        except queue.Empty:
                            break
                        audio, samples = _synthesize_one(engine, items[index], settings)
                        done.put(StreamResult(index, audio, samples, stream))
                except BaseException as exc:  # handed to the consumer
                    stop.set()
                    done.put(exc)
                finally:
                    done.put(_STOP)

        threads = [
            threading.Thread(target=work, args=(k, e), name=f"studio-cpu-stream-{k}", daemon=True)
            for k, e in enumerate(engines)
        ]
        for t in threads:
            t.start()
        running = len(threads)
        error: BaseException | None = None
        try:
            while running:
                got = done.get()
                if got is _STOP:
                    running -= 1
                elif isinstance(got, BaseException):
                    error = error or got
                elif error is None:
                    yield got
            if error is not None:
                if isinstance(error, EngineError):
                    raise error
                raise EngineError(f"synthesis stream failed: {type(error).__name__}: {error}") from error
        finally:
            stop.set()
            if jobs is not None:
                jobs.stop()
            for t in threads:
                t.join()


def _window_job(engine, jobs: WindowJobs, job: Job, items: list[list[int]], settings: SynthesisSettings,
                stream: int, hop: int, done: queue.SimpleQueue) -> None:
    """Run one encode or decode job; put the sentence on ``done`` when its last window is in."""
    if job.window is None:
        (latent,) = engine.encode_batch([items[job.index]], settings)
        jobs.encoded(job.index, latent)
        return
    latent = jobs.latent(job.index)
    finished = jobs.decoded(job, engine.decode_window(latent, latent.windows[job.window]), stream)
    if finished is not None:
        latent, pieces, streams = finished
        done.put(StreamResult(job.index, finish(pieces, latent.samples_per_id, hop), latent.samples_per_id,
                              stream, tuple(streams)))


def _synthesize_one(
    engine: Engine, ids: list[int], settings: SynthesisSettings
) -> tuple[np.ndarray, np.ndarray | None]:
    with_alignments = getattr(engine, "synthesize_batch_with_alignments", None)
    if with_alignments is not None:
        (audio, samples), = with_alignments([ids], settings)
        return audio, samples
    (audio,) = engine.synthesize_batch([ids], settings)
    return audio, None


class MultiStreamEngine(Engine):
    """``streams`` single-thread engines behind the Engine interface.

    :meth:`synthesize_batch` hands the whole batch to a :class:`MultiStreamSynthesizer`
    (longest first, one queue, every core busy) and returns the audio in input order,
    so the render loop drives it like any engine.
    """

    def __init__(self, engine_factory: Callable[[], Engine], streams: int | None = None, *, label: str = "") -> None:
        self.synth = MultiStreamSynthesizer(engine_factory, streams=streams)
        self.streams = self.synth.streams
        self.name = f"{label or 'engine'}x{self.streams}"

    @property
    def sample_rate(self) -> int:
        return self.synth.sample_rate

    def load(self) -> None:
        self.synth.load()

    def pending_build(self) -> PendingBuild | None:
        return self.synth.pending_build()

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return self.synth.text_to_ids(text, language, lexicon)

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        return self.synth.synthesize_all(ids, settings) if ids else []

    def synthesize_batch_with_alignments(
        self, ids: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """``(audio, samples per id)`` per item, in input order (as the ONNX engines give it):
        the benchmark finds the pauses of its reference audio by them."""
        out: list[tuple[np.ndarray, np.ndarray | None] | None] = [None] * len(ids)
        for result in self.synth.synthesize_results(ids, settings):
            out[result.index] = (result.audio, result.samples_per_id)
        return [item for item in out if item is not None]

    def describe(self) -> str:
        self.load()
        first = self.synth.engines[0]
        if windowed(first):
            return (f"{self.streams} stream(s) x 1 thread on shared sessions, windows of any sentence to any "
                    f"stream, longest sentence first; {first.describe()}")
        return f"{self.streams} stream(s) x 1 thread, longest sentence first; each: {first.describe()}"

    def close(self) -> None:
        self.synth.close()
