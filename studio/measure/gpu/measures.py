"""What the GPU check measures, one function per row kind.

Every engine comes from the one builder (:func:`studio.stack.build.build_engine`)
and batching from its :func:`~studio.stack.build.batch_engine`, so the check runs
the render path, not a copy of it. Memory is the device's (``mem_get_info``, see
:mod:`studio.engine.cuda_info`) next to torch's allocator figures; on a CPU dry
run both are None and printed as ``n/a``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from studio.measure.quality import log_mel_correlation
from studio.engine.base import Engine, SynthesisSettings
from studio.engine.cuda_info import DevicePeakMeter, device_memory, release_cuda_cache
from studio.stack.build import batch_engine, build_engine, plan_engine

log = logging.getLogger(__name__)

MiB = 2**20
#: noise off: batched/unbatched and FP16/FP32 outputs are then comparable sample by sample
NOISE_OFF = SynthesisSettings(0.0, 1.0, 0.0)
EQUAL_MIN_CORRELATION = 0.999
FP16_MIN_LOG_MEL = 0.98
GOAL_X_REALTIME = 1000.0
GOAL_RESIDENT_BYTES = 0.5e9


def mib(v: int | float | None) -> str:
    return "n/a" if v is None else f"{v / MiB:.0f} MiB"


@dataclass
class Loaded:
    """An engine the check loaded, with what loading it cost."""

    preset: str
    engine: Engine
    load_s: float
    resident: int | None  # device bytes added by loading (None: no device)
    torch_allocated: int | None
    baseline: int | None = None  # device bytes in use before loading


def _torch_allocated(device: str) -> int | None:
    if not device.startswith("cuda"):
        return None
    import torch

    return int(torch.cuda.memory_allocated(torch.device(device)))


def load(preset: str, voice: Any, device: str) -> Loaded:
    """One unbatched engine of ``preset`` through the builder, loaded; device memory it took."""
    release_cuda_cache("before loading a preset")
    before = device_memory(device)
    start = time.perf_counter()
    engine = build_engine(plan_engine(preset, voice, device=device, batch_size=1))
    engine.load()
    seconds = time.perf_counter() - start
    after = device_memory(device)
    resident = None if before is None or after is None else after[0] - before[0]
    return Loaded(preset, engine, seconds, resident, _torch_allocated(device), None if before is None else before[0])


def resident_after_warm_up(loaded: Loaded, device: str) -> tuple[str, str, dict]:
    """What the preset keeps on the device once it has spoken (weights, cuDNN/cuBLAS
    workspaces), with torch's cache of freed activation blocks returned first."""
    release_cuda_cache("resident measure")
    now = device_memory(device)
    resident = None if now is None or loaded.baseline is None else now[0] - loaded.baseline
    return "ok", f"{mib(resident)} device after warm-up ({mib(_torch_allocated(device))} torch tensors, both models)", {
        "resident_bytes": resident}


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.std() == 0 or b.std() == 0:
        return 1.0 if np.allclose(a, b) else 0.0
    return float(np.corrcoef(a, b)[0, 1])


def unbatched(engine: Engine, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
    return [engine.synthesize_batch([i], settings)[0] for i in ids]


def batched_vs_unbatched(engine: Engine, ids: Sequence[Sequence[int]], device: str,
                         single: list[np.ndarray]) -> tuple[str, str, dict]:
    """Batched against one-at-a-time output, noise off, two ways: through the render
    path's batching (length buckets) and as one padded batch of every length (the
    hardest case for the masks)."""
    together = batch_engine(engine, len(ids), device, max_batch_tokens=len(ids) * 4000)
    bucketed = together.synthesize_batch(ids, NOISE_OFF)
    padded = engine.synthesize_batch(ids, NOISE_OFF)
    same_length = min(sum(len(a) == len(b) for a, b in zip(single, out)) for out in (bucketed, padded))
    corrs = [pearson(a, b) for out in (bucketed, padded) for a, b in zip(single, out) if len(a) == len(b)]
    worst = min(corrs) if corrs else 0.0
    ok = same_length == len(ids) and worst >= EQUAL_MIN_CORRELATION
    stats = together.stats()
    figures = (f"{len(ids)} sentences, in {stats.batches} length-bucketed batches and in one padded batch: "
               f"{same_length}/{len(ids)} same length, min correlation {worst:.5f} (need >= {EQUAL_MIN_CORRELATION})")
    return ("ok" if ok else "fail"), figures, {"same_length": same_length, "min_correlation": worst,
                                               "batches": stats.batches}


def precision_vs_fp32(reference: list[np.ndarray], test: list[np.ndarray], sample_rate: int) -> tuple[str, str, dict]:
    """Log-mel correlation and durations of the test preset against FP32, noise off."""
    corr = [log_mel_correlation(r, t, sample_rate) for r, t in zip(reference, test)]
    diffs = [abs(len(r) - len(t)) for r, t in zip(reference, test)]
    ok = min(corr) >= FP16_MIN_LOG_MEL and max(diffs) == 0
    figures = (f"log-mel correlation min {min(corr):.4f} mean {float(np.mean(corr)):.4f} "
               f"(need >= {FP16_MIN_LOG_MEL}); durations: {sum(d == 0 for d in diffs)}/{len(diffs)} identical, "
               f"max diff {max(diffs)} samples")
    return ("ok" if ok else "fail"), figures, {"log_mel_min": min(corr), "log_mel_mean": float(np.mean(corr)),
                                               "duration_max_diff": max(diffs)}


def throughput(engine: Engine, ids: Sequence[Sequence[int]], batch: int, device: str, sample_rate: int,
               settings: SynthesisSettings, budget_s: float) -> tuple[str, str, dict]:
    """x real time over length-sorted sentences in batches of ``batch``, within ``budget_s``.

    The cache is released first, so the device-level peak above the start is what
    this batch size needs for activations.
    """
    import gc

    gc.collect()
    release_cuda_cache("between measurements")
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    # exactly ``batch`` consecutive length-sorted items per call (no length buckets: the
    # sort already keeps padding small); the mean batch in the figures shows it held
    wrapped = batch_engine(engine, batch, device, max_batch_tokens=batch * 4000, bucket_ratio=float("inf"))
    torch_peak = _reset_torch_peak(device)
    samples = items = 0
    start = time.perf_counter()
    with DevicePeakMeter(device if device.startswith("cuda") else None, interval_s=0.01) as meter:
        for s in range(0, len(order), batch):
            group = [ids[i] for i in order[s : s + batch]]
            samples += sum(a.size for a in wrapped.synthesize_batch(group, settings))
            items += len(group)
            if time.perf_counter() - start > budget_s:
                break
    wall = time.perf_counter() - start
    audio_s = samples / sample_rate
    xrt = audio_s / wall if wall > 0 else 0.0
    torch_act = None if torch_peak is None else _torch_peak(device) - torch_peak
    stats = wrapped.stats()  # before the figures: they quote the mean batch
    figures = (f"{xrt:,.1f}x real time, {items / wall:.1f} sentences/s ({items}/{len(ids)} sentences, "
               f"mean batch {stats.mean_batch_size:.1f}, "
               f"{audio_s:.0f} s audio in {wall:.1f} s); activations {mib(meter.rise if device != 'cpu' else None)} "
               f"device, {mib(torch_act)} torch")
    return "ok", figures, {"batch": batch, "x_realtime": round(xrt, 1), "sentences": items, "audio_s": audio_s,
                           "wall_s": wall, "activations_device_bytes": meter.rise if device != "cpu" else None,
                           "activations_torch_bytes": torch_act, "device_peak_bytes": meter.peak,
                           "mean_batch": getattr(stats, "mean_batch_size", None)}


def _reset_torch_peak(device: str) -> int | None:
    if not device.startswith("cuda"):
        return None
    import torch

    torch.cuda.reset_peak_memory_stats(torch.device(device))
    return int(torch.cuda.memory_allocated(torch.device(device)))


def _torch_peak(device: str) -> int:
    import torch

    return int(torch.cuda.max_memory_allocated(torch.device(device)))


def streaming(engine: Engine, paragraph: str, language: str, device: str,
              settings: SynthesisSettings, *, strict: bool = True) -> tuple[str, str, dict]:
    """Time to first audio of a long paragraph through :func:`stream_passage`, and whether
    every later chunk was ready before the audio before it had finished playing
    (a failure when ``strict``: on a GPU it must never run dry; a busy CPU running
    near real time may)."""
    from studio.engine.serving.streaming import stream_passage

    wrapped = batch_engine(engine, 32, device)
    start = time.perf_counter()
    ready, durations = [], []
    for chunk in stream_passage(wrapped, paragraph, language, settings):
        ready.append(time.perf_counter() - start)
        durations.append(chunk.duration_s)
    ttfa = ready[0]
    late = sum(1 for k in range(1, len(ready)) if ready[k] > ttfa + sum(durations[:k]))
    figures = (f"time to first audio {ttfa:.3f} s ({len(paragraph)} characters, {len(ready)} chunks, "
               f"{sum(durations):.0f} s audio in {ready[-1]:.2f} s); playback ran dry {late} times")
    return ("ok" if late == 0 or not strict else "fail"), figures, {"ttfa_s": ttfa, "chunks": len(ready), "late_chunks": late,
                                                       "audio_s": sum(durations), "total_s": ready[-1]}


def tensorrt_profile(torch_engine: Engine, sentences: Sequence[str], ids: Sequence[Sequence[int]],
                     language: str, max_calibration: int) -> tuple[str, str, dict]:
    """The TensorRT build's profile from its calibration set, and how many benchmark
    sentences would not fit it (they would run on torch FP32). Needs no TensorRT."""
    import torch

    from studio.engine.calibration import gather_calibration_sentences, sentences_to_ids, spread_by_length
    from studio.engine.tensorrt.build import DEFAULT_BATCH, count_over_profile, encoder_latents, make_profile
    from studio.engine.tensorrt.profile import make_batches

    scales = (0.667, 1.0, 0.8)
    chosen = spread_by_length(gather_calibration_sentences(list(sentences), env={}), max_calibration)
    cal_ids = sentences_to_ids(chosen, torch_engine.text_to_ids, language)

    def frames(seqs: Sequence[Sequence[int]]) -> list[int]:
        return [int(n) for b in make_batches(seqs, 16, fill_last=False)
                for n in encoder_latents(torch, torch_engine, b, scales)[2]]

    cal_frames = frames(cal_ids)
    profile = make_profile([len(s) for s in cal_ids], cal_frames, batch=DEFAULT_BATCH)
    bench_frames = frames(ids)
    over = count_over_profile(bench_frames, profile)
    figures = (f"profile {profile.token()} from {len(cal_ids)} calibration sentences; "
               f"{over}/{len(ids)} benchmark sentences over it (would run on torch FP32)")
    return ("ok" if over == 0 else "fail"), figures, {"profile": profile.token(), "over_profile": over,
                                                      "calibration_sentences": len(cal_ids)}


def goals(rows: Sequence[dict], *, dry_run: bool) -> tuple[str, str, dict]:
    """The issue's two targets, met or missed (reported, not failing: they are goals)."""
    if dry_run:
        return "info", "goals not measured on a CPU dry run", {}
    xrt = [r["x_realtime"] for r in rows if r.get("kind") == "throughput" and r.get("batch", 1) > 1]
    resident = [r["resident_bytes"] for r in rows if r.get("kind") == "resident" and r.get("preset") == "fp16-cuda"]
    best = max(xrt) if xrt else None
    res = resident[0] if resident and resident[0] is not None else None
    parts = [
        f">= {GOAL_X_REALTIME:,.0f}x real time batched: "
        + ("not measured" if best is None else f"{best:,.0f}x {'met' if best >= GOAL_X_REALTIME else 'missed'}"),
        "<= 0.5 GB resident (fp16-cuda): "
        + ("not measured" if res is None else f"{res / 1e9:.2f} GB {'met' if res <= GOAL_RESIDENT_BYTES else 'missed'}"),
    ]
    return "info", "; ".join(parts), {"best_x_realtime": best, "resident_bytes": res}
