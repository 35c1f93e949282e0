"""Build (or find in the cache) the INT8 model.

Split out of :mod:`studio.engine.onnx.int8` so that the engine class stays a thin
wrapper and the on-disk cache contract lives in one place: a model is keyed by the
source's sha256, the recipe, the calibration set and the onnxruntime version, built
under a cross-process lock, and written atomically, so a second render (or a second
process) reuses it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from studio.core import paths
from studio.core.errors import EngineError
from studio.core.files import build_lock, sha256_file_cached, write_atomic
from studio.engine.calibration import gather_calibration_sentences, spread_by_length
from studio.engine.onnx.int8_calibration import _feeds, _IdsReader, sentences_to_ids
from studio.engine.onnx.int8_recipe import DEFAULT_RECIPE, QuantPlan, QuantRecipe, plan_quantization
from studio.engine.onnx.layout import decoder_to_4d
from studio.engine.onnx.smooth import activation_peaks, smooth_last_stage

# logged under the public module's name, as before the split, so logging settings that
# name ``studio.engine.onnx.int8`` keep applying to builds
_LOGGER = logging.getLogger("studio.engine.onnx.int8")


# --------------------------------------------------------------------------- cache


def cache_key(
    model_sha256: str,
    recipe: QuantRecipe,
    calibration_ids: Sequence[Sequence[int]],
    *,
    calibration_only: bool = False,
) -> str:
    """sha256 over source model digest, recipe, calibration set and onnxruntime version.

    ``calibration_only``: the key of the activation ranges alone (see
    :meth:`QuantRecipe.calibration_token`).
    """
    import onnxruntime

    h = hashlib.sha256()
    h.update(model_sha256.encode())
    token = recipe.calibration_token() if calibration_only else recipe.token()
    h.update(b"\0" + (b"calib:" if calibration_only else b"model:") + token.encode())
    h.update(b"\0" + json.dumps([list(map(int, s)) for s in calibration_ids]).encode())
    h.update(b"\0ort=" + onnxruntime.__version__.encode())
    return h.hexdigest()


# --------------------------------------------------------------------------- build


@dataclass(frozen=True)
class Int8Build:
    """A built (or cache-hit) INT8 model and what went into it."""

    path: Path
    key: str
    plan: QuantPlan
    calibration_sentences: int
    quantized_conv_nodes: int
    cache_hit: bool
    build_seconds: float = 0.0
    recipe: QuantRecipe = field(default=DEFAULT_RECIPE)
    #: decoder convolutions rewritten to 2-D (0: layout rewrite off or not applicable)
    decoder_4d_convs: int = 0


def count_quantized_convs(model) -> int:
    """Conv nodes whose weight comes from a DequantizeLinear (QDQ) or QLinearConv nodes."""
    producers = {o: n for n in model.graph.node for o in n.output}
    count = 0
    for n in model.graph.node:
        if n.op_type == "QLinearConv":
            count += 1
        elif n.op_type == "Conv" and len(n.input) > 1:
            p = producers.get(n.input[1])
            if p is not None and p.op_type == "DequantizeLinear":
                count += 1
    return count


def _config_for(model_path: Path, config_path: str | Path | None) -> Path:
    return Path(config_path) if config_path else Path(f"{model_path}.json")


def _target(
    model_path: Path,
    calibration_sentences: Sequence[str] | None,
    cache_dir: str | Path | None,
    config_path: Path,
    recipe: QuantRecipe,
    builtin_sentences: bool,
    max_calibration_sentences: int | None,
) -> tuple[list[list[int]], str, Path, Path]:
    """``(calibration ids, key, ranges path, model path)`` of the INT8 build these inputs make."""
    if not model_path.is_file():
        raise EngineError(f"{model_path}: voice model not found")
    folder = (Path(cache_dir) if cache_dir is not None else paths.cache_dir()) / "int8"
    sentences = gather_calibration_sentences(calibration_sentences, builtin=builtin_sentences)
    if max_calibration_sentences is not None:
        # evenly across length so short and long sentences both stay represented
        sentences = spread_by_length(sentences, max(1, max_calibration_sentences))
    ids = sentences_to_ids(sentences, config_path)
    if not ids:
        raise EngineError("no calibration sentences produced phonemes")
    model_sha = sha256_file_cached(model_path)
    key = cache_key(model_sha, recipe, ids)
    calib_path = folder / f"{model_path.stem}.ranges-{cache_key(model_sha, recipe, ids, calibration_only=True)[:24]}.json"
    return ids, key, calib_path, folder / f"{model_path.stem}.int8-{key[:24]}.onnx"


def cached_int8(
    model_path: str | Path,
    calibration_sentences: Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
    *,
    config_path: str | Path | None = None,
    recipe: QuantRecipe = DEFAULT_RECIPE,
    builtin_sentences: bool = True,
    max_calibration_sentences: int | None = None,
) -> Path | None:
    """The INT8 model :func:`build_int8` would find in the cache for these inputs; None: it would build.

    Why: the app tells a producer that the one-time build (a minute or more) is
    starting, before it starts. Costs what a cache hit costs (phonemizing the
    calibration set, hashing the model), no quantization.
    """
    model_path = Path(model_path)
    _, _, _, out_path = _target(model_path, calibration_sentences, cache_dir, _config_for(model_path, config_path),
                                recipe, builtin_sentences, max_calibration_sentences)
    return out_path if out_path.is_file() and out_path.with_suffix(".json").is_file() else None


def build_int8(
    model_path: str | Path,
    calibration_sentences: Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
    *,
    config_path: str | Path | None = None,
    recipe: QuantRecipe = DEFAULT_RECIPE,
    builtin_sentences: bool = True,
    max_calibration_sentences: int | None = None,
) -> Int8Build:
    """Quantize (or find in the cache) and describe. See :func:`build_int8_model`."""
    import onnx

    model_path = Path(model_path)
    config_path = _config_for(model_path, config_path)
    ids, key, calib_path, out_path = _target(model_path, calibration_sentences, cache_dir, config_path, recipe,
                                             builtin_sentences, max_calibration_sentences)
    meta_path = out_path.with_suffix(".json")

    with build_lock(out_path.with_suffix(".lock")):
        if out_path.is_file() and meta_path.is_file():
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            return Int8Build(
                path=out_path,
                key=key,
                plan=QuantPlan.from_json(meta["plan"]),
                calibration_sentences=int(meta["calibration_sentences"]),
                quantized_conv_nodes=int(meta["quantized_conv_nodes"]),
                cache_hit=True,
                build_seconds=float(meta.get("build_seconds", 0.0)),
                recipe=recipe,
                decoder_4d_convs=int(meta.get("decoder_4d_convs", 0)),
            )
        for stale in out_path.parent.glob(f"{out_path.stem}.*.tmp.onnx"):  # a builder killed mid-way (a
            stale.unlink(missing_ok=True)  # cancelled measurement); under this key's lock nobody else writes them
        t0 = time.perf_counter()
        model = onnx.load(str(model_path))
        plan = plan_quantization(model, recipe)
        from studio.engine.voice.config import VoiceConfig

        config = VoiceConfig.from_file(config_path)
        sid = config.resolve_speaker(None)
        samples = [_feeds(seq, recipe.calibration_scales, sid) for seq in ids]
        out_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=out_path.stem + ".", suffix=".tmp.onnx", dir=out_path.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        source = tmp.with_name(tmp.name.replace(".tmp.onnx", ".src.tmp.onnx"))
        try:
            if recipe.smooth_alpha is not None:
                peaks = activation_peaks(model, samples[:16])
                if peaks is not None:
                    smooth_last_stage(model, peaks, recipe.smooth_alpha)
            layout_convs = decoder_to_4d(model) if recipe.decoder_4d else 0
            onnx.save(model, str(source))
            del model
            _quantize(source, tmp, plan, recipe, _IdsReader(samples), calib_path)
            quantized = onnx.load(str(tmp))
            n_q = count_quantized_convs(quantized)
            del quantized
            seconds = time.perf_counter() - t0
            meta = {
                "source": str(model_path),
                "key": key,
                "recipe": asdict(recipe),
                "plan": plan.to_json(),
                "calibration_sentences": len(ids),
                "quantized_conv_nodes": n_q,
                "decoder_4d_convs": layout_convs,
                "build_seconds": seconds,
            }
            os.replace(tmp, out_path)
            write_atomic(meta_path, json.dumps(meta, indent=1))
        finally:
            tmp.unlink(missing_ok=True)
            source.unlink(missing_ok=True)
        _LOGGER.info("built INT8 %s (%d convs, %.1f s)", out_path.name, n_q, seconds)
        return Int8Build(out_path, key, plan, len(ids), n_q, False, seconds, recipe, layout_convs)


def build_int8_model(
    model_path: str | Path,
    calibration_sentences: Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
    **kwargs,
) -> Path:
    """The INT8 version of a Piper ``.onnx`` voice (built once, then from the cache).

    ``calibration_sentences`` (the project's own sentences) are added to the built-in
    set, as is the file named by ``$CALIBRATION_DATA_PATH``. ``cache_dir`` defaults to
    ``$STUDIO_CACHE_DIR`` or ``~/.cache/studio``. Keyword arguments go to
    :func:`build_int8` (``config_path``, ``recipe``, ``max_calibration_sentences``...).
    """
    return build_int8(model_path, calibration_sentences, cache_dir, **kwargs).path


def _quantize(
    source: Path, dest: Path, plan: QuantPlan, recipe: QuantRecipe, reader: _IdsReader, ranges: Path
) -> None:
    """``quantize_static`` with the activation ranges cached in ``ranges`` (JSON)."""
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    method = {
        "percentile": CalibrationMethod.Percentile,
        "minmax": CalibrationMethod.MinMax,
        "entropy": CalibrationMethod.Entropy,
    }[recipe.calibrate_method.lower()]
    extra = {
        "ActivationSymmetric": recipe.activation_symmetric,
        "WeightSymmetric": recipe.weight_symmetric,
        # one sentence per collect: activations of different lengths cannot be stacked
        "CalibStridedMinMax": 1,
        "CalibTensorRangeSymmetric": recipe.calib_range_symmetric,
        "CalibPercentile": recipe.percentile,
    }
    new_ranges = None
    if not ranges.is_file():
        fd, name = tempfile.mkstemp(prefix=ranges.stem + ".", suffix=".tmp.json", dir=ranges.parent)
        os.close(fd)
        new_ranges = Path(name)
        new_ranges.unlink()  # quantize_static calibrates only when the cache file is absent
    try:
        # quantize_static's calibrator and histogram collector print progress to stdout
        with contextlib.redirect_stdout(io.StringIO()):
            quantize_static(
                str(source),
                str(dest),
                reader,
                quant_format=QuantFormat.QDQ,
                op_types_to_quantize=["Conv"],
                nodes_to_quantize=plan.nodes_to_quantize,
                per_channel=recipe.per_channel,
                reduce_range=recipe.reduce_range,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                calibrate_method=method,
                extra_options=extra,
                calibration_cache_path=str(new_ranges or ranges),
            )
        if new_ranges is not None and new_ranges.is_file():
            os.replace(new_ranges, ranges)
    finally:
        if new_ranges is not None:
            new_ranges.unlink(missing_ok=True)
