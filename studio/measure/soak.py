"""Memory soak: synthesize many long passages in one process and watch memory.

Why: a book is tens of thousands of sentences through one engine. Calling a VITS
model (Coqui's in particular) in a long loop is known to grow memory when tensors,
autograd graphs or caches outlive their use; a render that grows a few MB per
passage dies hours in. This runs the engine the way a render does (one batch of
sentences per passage, no ``gc.collect()`` in between) and measures process RSS
(and CUDA allocated memory when the engine uses CUDA) after every passage.

Verdict: after ``warmup`` passages (allocator pools, ORT arenas and lazy caches fill
up during the first ones) the memory must not grow by ``limit`` (5 %) or more:
``growth = (max(after warm-up) - baseline) / baseline`` where ``baseline`` is the
value right after the warm-up. The least-squares slope per passage is reported too,
as the number to look at when the verdict is close.

What it found: with glibc's default malloc settings the torch engine's RSS grows by
~36 MB per passage without a plateau (+114 % in 60 passages) -- not tensors kept
alive (the engine holds none) but heap fragmentation from variable-sized activation
buffers under glibc's dynamic mmap threshold, plus oneDNN's per-shape primitive
cache filling up. :meth:`studio.stack.isolation.memory.HeapBounds.apply` (applied here by
default, ``tune=False`` / ``--no-tuning`` to see the growth) and every
:class:`~studio.stack.isolation.IsolatedEngine` child bound both.

Used by ``bench/soak.py`` (100 passages of ~300-500 characters) and by
``tests/measure/test_soak.py`` (a short version).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from studio.core.errors import EngineError
from studio.engine.base import Engine, SynthesisSettings

log = logging.getLogger(__name__)

__all__ = [
    "SoakResult",
    "SoakSample",
    "make_passages",
    "open_engine",
    "process_memory",
    "run_soak",
    "soak",
    "soak_in_fresh_process",
]

#: Plain English prose, varied in length and punctuation; passages are drawn from it.
SENTENCES: tuple[str, ...] = (
    "The rain had stopped by the time the last train pulled into the station.",
    "She folded the letter twice and slipped it into the pocket of her coat.",
    "Nobody in the village remembered who had planted the old oak by the river.",
    "For a moment the house was perfectly quiet, and then the clock struck nine.",
    "He counted the coins on the table: four silver ones and a single copper penny.",
    "The road climbed through the pine forest, narrowing with every bend.",
    "It was, as her grandmother liked to say, a fine day for bad decisions.",
    "A thin line of smoke rose from the chimney and drifted toward the hills.",
    "They argued about the map until the sun slipped behind the mountains.",
    "Why would anyone leave a lantern burning in an empty barn?",
    "The captain studied the horizon, then turned and gave the order to sail.",
    "Every morning the baker opened his shutters at exactly half past five.",
    "The library smelled of dust, leather, and something faintly like oranges.",
    "Her brother laughed so hard that he nearly fell off the garden wall.",
    "Outside, the wind rattled the windows as if it wanted to come in.",
    "Three days later, a stranger arrived with a box he would not let anyone open.",
    "The children ran down to the harbor to watch the fishing boats come home.",
    "Somewhere far below, water dripped steadily into a hidden pool.",
    "He had promised to write every week, and for a whole year he did.",
    "The old professor cleared his throat and began the lecture once again.",
    "Snow covered the fields, the fences, and the little stone bridge.",
    "She could not decide whether the noise had been a footstep or the cat.",
    "By noon the market square was crowded with carts, dogs, and shouting traders.",
    "The letter was signed with a single initial and sealed with green wax.",
    "At the edge of the forest, the path split into two narrow trails.",
    "Nothing about the morning suggested that everything was about to change.",
)


def make_passages(
    count: int,
    *,
    min_chars: int = 300,
    max_chars: int = 500,
    seed: int = 1234,
) -> list[list[str]]:
    """``count`` passages, each a list of sentences totalling ``min_chars..max_chars``.

    Deterministic for a given seed. A single sentence longer than ``max_chars`` is
    never produced (the pool's sentences are short), so every passage fits the range
    as long as ``max_chars - min_chars`` exceeds the longest pool sentence.
    """
    rng = random.Random(seed)
    passages: list[list[str]] = []
    for _ in range(count):
        sentences: list[str] = []
        length = 0
        while length < min_chars:
            candidate = rng.choice(SENTENCES)
            extra = len(candidate) + (1 if sentences else 0)
            if length + extra > max_chars:
                if sentences:
                    break
                candidate = candidate[:max_chars]
                extra = len(candidate)
            sentences.append(candidate)
            length += extra
        passages.append(sentences)
    return passages


@dataclass(frozen=True)
class SoakSample:
    """Memory right after one passage."""

    index: int
    chars: int
    sentences: int
    seconds: float
    audio_seconds: float
    rss_bytes: int
    cuda_allocated_bytes: int | None = None
    cuda_reserved_bytes: int | None = None


def _growth(values: Sequence[int], warmup: int) -> tuple[int, int, float]:
    baseline = values[warmup - 1] if warmup > 0 else values[0]
    after = values[warmup:] or values[-1:]
    peak = max(after)
    return baseline, peak, (peak - baseline) / baseline if baseline else 0.0


def _slope(values: Sequence[int]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean_x = (n - 1) / 2
    mean_y = sum(values) / n
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den


@dataclass(frozen=True)
class SoakResult:
    engine: str
    samples: tuple[SoakSample, ...]
    warmup: int
    limit: float
    baseline_rss: int
    peak_rss: int
    rss_growth: float
    rss_slope_bytes: float
    cuda_baseline: int | None = None
    cuda_peak: int | None = None
    cuda_growth: float | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return self.rss_growth < self.limit and (self.cuda_growth is None or self.cuda_growth < self.limit)

    def table(self) -> str:
        cuda = any(s.cuda_allocated_bytes is not None for s in self.samples)
        head = f"{'#':>4} {'chars':>5} {'sent':>4} {'sec':>6} {'audio s':>7} {'RSS MiB':>8}"
        if cuda:
            head += f" {'VRAM alloc MiB':>14} {'VRAM resv MiB':>13}"
        lines = [head]
        for s in self.samples:
            line = (f"{s.index + 1:>4} {s.chars:>5} {s.sentences:>4} {s.seconds:>6.2f} "
                    f"{s.audio_seconds:>7.1f} {s.rss_bytes / 2**20:>8.1f}")
            if cuda:
                line += (f" {(s.cuda_allocated_bytes or 0) / 2**20:>14.1f}"
                         f" {(s.cuda_reserved_bytes or 0) / 2**20:>13.1f}")
            if s.index + 1 == self.warmup:
                line += "   <- end of warm-up (baseline)"
            lines.append(line)
        return "\n".join(lines)

    def summary(self) -> str:
        n = len(self.samples)
        wall = sum(s.seconds for s in self.samples)
        audio = sum(s.audio_seconds for s in self.samples)
        lines = [
            f"engine {self.engine}: {n} passages, {sum(s.chars for s in self.samples)} chars, "
            f"{audio:.0f} s of audio in {wall:.0f} s (RTF {wall / audio if audio else 0:.3f})",
            f"RSS: first {self.samples[0].rss_bytes / 2**20:.1f} MiB, baseline after "
            f"{self.warmup} warm-up passages {self.baseline_rss / 2**20:.1f} MiB, peak after "
            f"{self.peak_rss / 2**20:.1f} MiB, last {self.samples[-1].rss_bytes / 2**20:.1f} MiB; "
            f"growth {self.rss_growth * 100:+.2f}% (limit {self.limit * 100:.0f}%), "
            f"slope {self.rss_slope_bytes / 1024:+.1f} KiB/passage",
        ]
        if self.cuda_growth is not None:
            lines.append(
                f"VRAM allocated: baseline {(self.cuda_baseline or 0) / 2**20:.1f} MiB, peak after "
                f"{(self.cuda_peak or 0) / 2**20:.1f} MiB, growth {self.cuda_growth * 100:+.2f}%"
            )
        lines.extend(self.notes)
        lines.append("PASS" if self.passed else "FAIL: memory grows")
        return "\n".join(lines)


def process_memory() -> tuple[int, int | None, int | None]:
    """(RSS, CUDA allocated, CUDA reserved) of this process; CUDA only if torch uses it."""
    import psutil

    rss = int(psutil.Process(os.getpid()).memory_info().rss)
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                torch.cuda.synchronize()
                return rss, int(torch.cuda.memory_allocated()), int(torch.cuda.memory_reserved())
        except Exception:  # noqa: BLE001 - a broken CUDA stack: report RSS alone, and say why
            log.exception("cannot read CUDA memory; reporting RSS only")
    return rss, None, None


def run_soak(
    engine: Engine,
    passages: Sequence[Sequence[str]],
    *,
    language: str = "en",
    settings: SynthesisSettings | None = None,
    warmup: int = 10,
    limit: float = 0.05,
    measure: Callable[[], tuple[int, int | None, int | None]] = process_memory,
    on_sample: Callable[[SoakSample], None] | None = None,
) -> SoakResult:
    """Synthesize every passage (its sentences as one batch) and record memory after each.

    ``engine`` must be loaded (or loadable); ``measure`` returns (RSS, CUDA allocated,
    CUDA reserved) -- by default of this process; pass e.g. an
    :class:`~studio.stack.isolation.IsolatedEngine`'s child memory to soak a child.
    """
    if len(passages) <= warmup:
        raise ValueError(f"need more than {warmup} passages (warm-up), got {len(passages)}")
    settings = settings or SynthesisSettings()
    engine.load()
    rate = engine.sample_rate
    samples: list[SoakSample] = []
    for index, sentences in enumerate(passages):
        t0 = time.perf_counter()
        ids = [engine.text_to_ids(s, language) for s in sentences]
        audio = engine.synthesize_batch(ids, settings)
        seconds = time.perf_counter() - t0
        n_samples = sum(len(a) for a in audio)
        del audio, ids  # the caller would drop them too; do not count them as a leak
        rss, cuda_alloc, cuda_resv = measure()
        sample = SoakSample(
            index=index,
            chars=sum(len(s) for s in sentences) + max(0, len(sentences) - 1),
            sentences=len(sentences),
            seconds=seconds,
            audio_seconds=n_samples / rate,
            rss_bytes=rss,
            cuda_allocated_bytes=cuda_alloc,
            cuda_reserved_bytes=cuda_resv,
        )
        samples.append(sample)
        if on_sample is not None:
            on_sample(sample)

    rss_values = [s.rss_bytes for s in samples]
    baseline, peak, growth = _growth(rss_values, warmup)
    cuda_baseline = cuda_peak = cuda_growth = None
    cuda_values = [s.cuda_allocated_bytes for s in samples]
    if all(v is not None for v in cuda_values):
        cuda_baseline, cuda_peak, cuda_growth = _growth(cuda_values, warmup)  # type: ignore[arg-type]
    return SoakResult(
        engine=str(engine.name),
        samples=tuple(samples),
        warmup=warmup,
        limit=limit,
        baseline_rss=baseline,
        peak_rss=peak,
        rss_growth=growth,
        rss_slope_bytes=_slope(rss_values[warmup:]),
        cuda_baseline=cuda_baseline,
        cuda_peak=cuda_peak,
        cuda_growth=cuda_growth,
    )


def open_engine(
    backend: str = "auto", *, device: str = "cpu", threads: int | None = None
) -> tuple[Engine, tuple[str, ...]]:
    """The bundled voice on ``backend``'s FP32 preset, loaded; ``"auto"`` = torch, else onnx.

    Built like a render's engine (:func:`studio.stack.build.build_engine`), one
    stream, in this process: the soak measures this process. Returns the engine and
    notes (why a fallback happened).
    """
    from studio.engine.presets import preset_for_backend
    from studio.stack.build import build_engine, plan_engine

    order = ["torch", "onnx"] if backend == "auto" else [backend]
    notes: list[str] = []
    for name in order:
        try:
            plan = plan_engine(preset_for_backend(name), device=device, streams=1, threads=threads)
            engine = build_engine(plan)
            engine.load()
            return engine, tuple(notes)
        except EngineError as exc:
            if name == order[-1]:
                raise
            notes.append(f"{name} engine unavailable ({exc}); fell back to the next")
    raise AssertionError("unreachable")


def soak(
    backend: str = "auto",
    count: int = 100,
    *,
    min_chars: int = 300,
    max_chars: int = 500,
    device: str = "cpu",
    threads: int | None = None,
    warmup: int = 10,
    limit: float = 0.05,
    tune: bool = True,
    settings: SynthesisSettings | None = None,
    on_sample: Callable[[SoakSample], None] | None = None,
) -> SoakResult:
    """Open the bundled voice on ``backend`` in this process and soak it.

    ``tune`` applies :meth:`studio.stack.isolation.memory.HeapBounds.apply` first (what a
    model process gets from :class:`~studio.stack.isolation.IsolatedEngine`); it only
    fully works in a process that has not run torch yet -- see
    :func:`soak_in_fresh_process`.
    """
    notes: list[str] = []
    if tune:
        from studio.engine.presets import preset_for_backend
        from studio.stack.build import heap_bounds_for

        # auto tries torch first
        bounds = heap_bounds_for(preset_for_backend("onnx" if backend == "onnx" else "torch"))
        notes.append(f"allocator bounds applied ({bounds.describe()})" if bounds.apply()
                     else "allocator bounds requested (glibc not found)")
    else:
        notes.append("library-default allocators (no bounds)")
    engine, opened = open_engine(backend, device=device, threads=threads)
    notes.extend(opened)
    try:
        result = run_soak(
            engine,
            make_passages(count, min_chars=min_chars, max_chars=max_chars),
            settings=settings,
            warmup=warmup,
            limit=limit,
            on_sample=on_sample,
        )
    finally:
        engine.close()
    return dataclasses.replace(result, notes=result.notes + tuple(notes))


def soak_in_fresh_process(**kwargs: object) -> SoakResult:
    """:func:`soak` in a newly spawned interpreter (``on_sample`` is not supported).

    A soak measures the process it runs in, so it must not share one with code that
    already grew or tuned the heap (a test session that ran other torch tests).
    """
    import concurrent.futures
    import multiprocessing

    if "on_sample" in kwargs:
        raise ValueError("on_sample cannot cross processes")
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        return pool.submit(soak, **kwargs).result()
