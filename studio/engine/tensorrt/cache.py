"""Where serialized TensorRT engines live, and what makes one reusable.

Building an INT8 engine takes minutes (export, calibration, kernel tuning), so a
plan is cached under ``$STUDIO_CACHE_DIR/tensorrt/<sha256>.plan`` and reused only
when nothing it depends on has changed: source model, TensorRT version, GPU,
precision, profile, graph variant, calibration set, and the studio and exporter
versions that produced the graph (:func:`engine_cache_key`). A graph that TensorRT
refused, or that built but computed the wrong thing, leaves a ``.failed`` marker
next to its plan so that every later load does not pay for the same failed build
again -- but only for failures that would repeat: a transient one (out of memory,
another process holding the GPU) leaves no marker, and a marker expires after
:data:`FAILED_MARKER_TTL_S` so a driver or library update gets its retry. Kernel
timings are cached per GPU and TensorRT version (:func:`timing_cache_path`).

Pure Python: nothing here imports TensorRT or torch, so it is tested without them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

import studio
from studio.core.errors import EngineError
from studio.core.files import write_atomic

_LOGGER = logging.getLogger(__name__)

PRECISIONS = ("int8", "fp16", "fp32")
#: a remembered build failure is retried after this long (a week)
FAILED_MARKER_TTL_S = 7 * 24 * 3600
#: messages of failures that say nothing about the graph: never remembered
_TRANSIENT = ("out of memory", "outofmemory", "cudaerrormemoryallocation", "cuda_error_out_of_memory",
              "insufficient memory", "failed to allocate", "device busy", "cudaerrordevicesunavailable",
              "timed out", "interrupted")


def _canonical_profile(profile: Mapping[str, Sequence[Sequence[int]]]) -> dict[str, list[list[int]]]:
    """``{input: [min_shape, opt_shape, max_shape]}`` with plain int lists, validated."""
    out: dict[str, list[list[int]]] = {}
    for name in sorted(profile):
        shapes = [list(int(d) for d in s) for s in profile[name]]
        if len(shapes) != 3 or len({len(s) for s in shapes}) != 1:
            raise ValueError(f"profile for {name!r} must be three shapes of equal rank, got {shapes}")
        for lo, opt, hi in zip(*shapes):
            if not lo <= opt <= hi:
                raise ValueError(f"profile for {name!r}: need min <= opt <= max per dim, got {shapes}")
        out[name] = shapes
    return out


def engine_cache_key(
    model_hash: str,
    trt_version: str,
    gpu_name: str,
    precision: str,
    profile: Mapping[str, Sequence[Sequence[int]]],
    *,
    variant: str = "flow_decoder",
    extra: str = "",
    studio_version: str | None = None,
    exporter: str | None = None,
) -> str:
    """sha256 hex over everything a serialized engine depends on. Pure, deterministic.

    ``model_hash``: sha256 of the source model (and exporter, folded in by the
    caller); ``trt_version``: engines only load on the version that built them;
    ``gpu_name``: kernels are tuned per GPU (include the compute capability);
    ``precision``; ``profile``: ``{input: (min, opt, max) shapes}`` (order of the
    mapping does not matter); ``variant``: which graph; ``extra``: e.g. the
    calibration set's digest; ``studio_version`` (default: this studio's) and
    ``exporter`` (default: :func:`exporter_token`): the code that exported and
    calibrated the graph, so a plan built by an older studio is never reused.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {PRECISIONS}")
    payload = {
        "model": str(model_hash),
        "tensorrt": str(trt_version),
        "gpu": str(gpu_name),
        "precision": precision,
        "profile": _canonical_profile(profile),
        "variant": str(variant),
        "extra": str(extra),
        "studio": str(studio.__version__ if studio_version is None else studio_version),
        "exporter": str(exporter_token() if exporter is None else exporter),
        "format": 2,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def exporter_token() -> str:
    """The exporter's version and opset, as they enter the cache key (no torch import)."""
    from studio.engine.torchvits.export import DEFAULT_OPSET, EXPORTER_VERSION

    return f"export-{EXPORTER_VERSION};opset-{DEFAULT_OPSET}"


def engine_cache_path(cache_dir: str | Path, key: str) -> Path:
    return Path(cache_dir) / "tensorrt" / f"{key}.plan"


def timing_cache_path(cache_dir: str | Path, trt_version: str, gpu_name: str) -> Path:
    """TensorRT's kernel timing cache: valid for one GPU model and one TensorRT version."""
    tag = hashlib.sha256(f"{trt_version}|{gpu_name}".encode()).hexdigest()[:16]
    return Path(cache_dir) / "tensorrt" / f"timing-{tag}.cache"


def ids_digest(id_seqs: Sequence[Sequence[int]]) -> str:
    """Short digest of a calibration id set (enters the cache key as ``extra``)."""
    h = hashlib.sha256()
    for seq in id_seqs:
        h.update(np.asarray(seq, dtype=np.int64).tobytes())
        h.update(b"|")
    return h.hexdigest()[:16]


def load_or_build(path: Path, build: Callable[[], bytes]) -> tuple[bytes, bool]:
    """The cached plan at ``path`` or ``build()`` written atomically; ``(bytes, cache_hit)``."""
    if path.is_file() and path.stat().st_size > 0:
        return path.read_bytes(), True
    data = build()
    if not data:
        raise EngineError("TensorRT returned an empty engine")
    write_atomic(path, data)
    return data, False


def exported_onnx_path(cache_dir: str | Path, variant: str, source_hash: str, torch_version: str) -> Path:
    """Where :func:`exported_onnx` keeps the export of ``variant`` (nothing is exported here)."""
    tag = hashlib.sha256(f"{source_hash}|{variant}|{torch_version}|{exporter_token()}".encode()).hexdigest()[:24]
    return Path(cache_dir) / "onnx" / f"{variant}-{tag}.onnx"


def exported_onnx(torch_engine, cache_dir: Path, variant: str, source_hash: str) -> Path:
    """Exported ONNX for ``variant``, cached by source model, torch version and opset."""
    import torch

    from studio.engine.torchvits.export import export_onnx

    path = exported_onnx_path(cache_dir, variant, source_hash, torch.__version__)
    if not path.is_file():
        tmp = path.with_suffix(".tmp.onnx")
        export_onnx(torch_engine, tmp, variant)
        os.replace(tmp, path)
    return path


def _failure_marker(plan_path: Path) -> Path:
    return plan_path.with_suffix(".failed")


def is_transient(exc: BaseException | str) -> bool:
    """True for failures that say nothing about the graph (memory, a busy GPU, a timeout)."""
    if isinstance(exc, (MemoryError, TimeoutError, KeyboardInterrupt)):
        return True
    text = str(exc).lower().replace(" ", "")
    return any(t.replace(" ", "") in text for t in _TRANSIENT)


def raise_if_failed_before(plan_path: Path, *, now: float | None = None) -> None:
    """EngineError with the remembered reason when this plan's graph failed before.

    A marker older than :data:`FAILED_MARKER_TTL_S` (or unreadable) is removed and
    the build is tried again.
    """
    failed = _failure_marker(plan_path)
    if not failed.is_file():
        return
    try:
        record = json.loads(failed.read_text(encoding="utf-8"))
        reason, at = str(record["reason"]), float(record["at"])
    except (OSError, ValueError, KeyError, TypeError):
        reason, at = "", float("-inf")
    if (time.time() if now is None else now) - at > FAILED_MARKER_TTL_S:
        _LOGGER.info("retrying a TensorRT build that failed over a week ago: %s", reason or failed)
        failed.unlink(missing_ok=True)
        return
    raise EngineError(f"{reason} (cached; delete {failed} to retry)")


def remember_failure(plan_path: Path, exc: BaseException, *, now: float | None = None) -> bool:
    """Mark this plan's graph as failed (see :func:`raise_if_failed_before`); True if marked.

    Transient failures (:func:`is_transient`) are not marked: the next load tries again.
    """
    if is_transient(exc):
        _LOGGER.warning("TensorRT build failed for a passing reason, not remembered: %s", exc)
        return False
    record = {"reason": str(exc), "at": time.time() if now is None else now}
    write_atomic(_failure_marker(plan_path), json.dumps(record).encode("utf-8"))
    return True


__all__ = [
    "PRECISIONS",
    "engine_cache_key",
    "engine_cache_path",
    "exported_onnx",
    "exporter_token",
    "ids_digest",
    "is_transient",
    "load_or_build",
    "raise_if_failed_before",
    "remember_failure",
    "timing_cache_path",
]
