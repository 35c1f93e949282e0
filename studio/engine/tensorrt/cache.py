"""Where serialized TensorRT engines live, and what makes one reusable.

Building an INT8 engine takes minutes (export, calibration, kernel tuning), so a
plan is cached under ``$STUDIO_CACHE_DIR/tensorrt/<sha256>.plan`` and reused only
when nothing it depends on has changed: source model, TensorRT version, GPU,
precision, profile, graph variant and calibration set (:func:`engine_cache_key`).
A graph that TensorRT refused, or that built but computed the wrong thing, leaves
a ``.failed`` marker next to its plan so that every later load does not pay for
the same failed build again.

Pure Python: nothing here imports TensorRT or torch, so it is tested without them.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from studio.core.errors import EngineError

PRECISIONS = ("int8", "fp16", "fp32")




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
    variant: str = "full",
    extra: str = "",
) -> str:
    """sha256 hex over everything a serialized engine depends on. Pure, deterministic.

    ``model_hash``: sha256 of the source model (and exporter, folded in by the
    caller); ``trt_version``: engines only load on the version that built them;
    ``gpu_name``: kernels are tuned per GPU (include the compute capability);
    ``precision``; ``profile``: ``{input: (min, opt, max) shapes}`` (order of the
    mapping does not matter); ``variant``: which graph; ``extra``: e.g. the
    calibration set's digest.
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
        "format": 1,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def engine_cache_path(cache_dir: str | Path, key: str) -> Path:
    return Path(cache_dir) / "tensorrt" / f"{key}.plan"


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
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return data, False


def exported_onnx(torch_engine, cache_dir: Path, variant: str, source_hash: str) -> Path:
    """Exported ONNX for ``variant``, cached by source model, torch version and opset."""
    import torch

    from studio.engine.torchvits.export import DEFAULT_OPSET, export_onnx

    tag = hashlib.sha256(f"{source_hash}|{variant}|{torch.__version__}|{DEFAULT_OPSET}".encode()).hexdigest()[:24]
    path = Path(cache_dir) / "onnx" / f"{variant}-{tag}.onnx"
    if not path.is_file():
        tmp = path.with_suffix(".tmp.onnx")
        export_onnx(torch_engine, tmp, variant)
        os.replace(tmp, path)
    return path


def _failure_marker(plan_path: Path) -> Path:
    return plan_path.with_suffix(".failed")


def raise_if_failed_before(plan_path: Path) -> None:
    """EngineError with the remembered reason when this plan's graph failed before."""
    failed = _failure_marker(plan_path)
    if failed.is_file():
        raise EngineError(f"{failed.read_text(encoding='utf-8')} (cached; delete {failed} to retry)")


def remember_failure(plan_path: Path, exc: BaseException) -> None:
    """Mark this plan's graph as failed (see :func:`raise_if_failed_before`)."""
    failed = _failure_marker(plan_path)
    failed.parent.mkdir(parents=True, exist_ok=True)
    failed.write_text(str(exc), encoding="utf-8")


__all__ = [
    "PRECISIONS",
    "engine_cache_key",
    "engine_cache_path",
    "exported_onnx",
    "ids_digest",
    "load_or_build",
    "raise_if_failed_before",
    "remember_failure",
]
