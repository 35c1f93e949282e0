"""Turning an exported VITS graph into a TensorRT plan: profile, precision, calibration.

The optimization profile's ``min/opt/max`` come from the project's own sentence
lengths (:func:`make_profile`) because TensorRT tunes kernels for *opt* and
rejects anything outside *min..max*; calibration data is batched at *opt* too.

Precision policy (same reasoning as the CPU INT8 preset, :func:`layer_precision`),
applied to *every* layer, not only convolutions: anything outside the flow and the
decoder (text encoder, duration predictor, and any layer the policy cannot place)
is pinned FP32 -- they decide the durations, so the audio length, and their exp /
ceil / cumsum / softmax / norms are exactly the layers FP16 breaks; the decoder's
last stage and ``conv_post`` (they write the waveform) at most FP16; the flow's and
the early decoder's convolutions may run INT8, their other layers FP16.
TensorRT 8.6-10.x (the supported range, ``studio[tensorrt]``) gets FP16 + INT8
builder flags, an ``IInt8EntropyCalibrator2`` whose device buffers are torch CUDA
tensors, and a timing cache on disk. TensorRT >= 11 removed implicit INT8 (no
INT8/FP16 flags, no calibrators); there the graph is quantized *explicitly* first
(Q/DQ nodes from ONNX Runtime's static quantizer with running min/max, fed by the
same calibration batches, biases left in float) and built strongly typed, which
leaves every non-INT8 layer FP32 (said in the engine's description).

``tensorrt``, ``torch``, ``onnx`` and ``onnxruntime`` are passed in or imported
lazily; everything that does not talk to TensorRT is plain Python, tested without it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.core.files import write_atomic
from studio.engine.base import CUDA_BATCH
from studio.engine.tensorrt.int8 import feed_device_buffers, make_calibrator, qdq_model
from studio.engine.tensorrt.profile import (
    CalibrationBatch,
    CalibrationFeeder,
    ShapeProfile,
    count_over_profile,
    layer_precision,
    make_batches,
    profile_shapes,
)
from studio.engine.tensorrt.runtime import tensorrt_version

_LOGGER = logging.getLogger(__name__)

#: graphs this module can build. ``flow_decoder`` is the default and the sound design:
#: its shapes are plain functions of the input shape. ``full`` has data-dependent
#: output shapes (the audio length comes from the predicted durations), a known
#: TensorRT failure; it is tried only when asked for.
VARIANT_ORDER = ("flow_decoder", "full")
DEFAULT_VARIANTS = ("flow_decoder",)

#: default batch dimension of the optimization profile: opt = the batch the CUDA
#: render path sends (studio.engine.base.CUDA_BATCH), so kernels are tuned for it
DEFAULT_BATCH = ShapeProfile(1, CUDA_BATCH, 2 * CUDA_BATCH)
#: hard caps on the length dimensions (ids / latent frames) of the profile
MAX_PHONEMES = 600
MAX_FRAMES = 4096
#: headroom on the frame profile for slower speech (length_scale > 1) than calibrated
FRAME_HEADROOM = 1.5


@dataclass(frozen=True)
class TrtProfile:
    """The optimization profile: batch, ids per sentence, latent frames per sentence."""

    batch: ShapeProfile
    phonemes: ShapeProfile
    frames: ShapeProfile
    channels: int = 192

    def input_shapes(self, variant: str) -> dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
        """``{input name: (min, opt, max)}`` shapes of ``variant``'s dynamic inputs."""
        b = self.batch
        if variant == "full":
            p = self.phonemes
            return {
                "input": ((b.min, p.min), (b.opt, p.opt), (b.max, p.max)),
                "input_lengths": ((b.min,), (b.opt,), (b.max,)),
            }
        if variant == "flow_decoder":
            f, c = self.frames, self.channels
            return {
                "z_p": ((b.min, c, f.min), (b.opt, c, f.opt), (b.max, c, f.max)),
                "y_mask": ((b.min, 1, f.min), (b.opt, 1, f.opt), (b.max, 1, f.max)),
            }
        raise ValueError(f"unknown variant {variant!r}")

    def token(self) -> str:
        return f"b{self.batch.token()}_p{self.phonemes.token()}_f{self.frames.token()}_c{self.channels}"


def make_profile(
    id_lengths: Sequence[int],
    frame_lengths: Sequence[int],
    *,
    batch: ShapeProfile = DEFAULT_BATCH,
    channels: int = 192,
) -> TrtProfile:
    """Profile from the project's id lengths and the latent frames they produce.

    Frames get :data:`FRAME_HEADROOM` on max so slower speech still fits; the max
    covers the *longest* calibration item (not only its p99) times the headroom, so
    a sentence as long as the longest one calibrated never leaves the engine. Longer
    ones run on torch and are counted (:func:`count_over_profile`).
    """
    phon = profile_shapes(id_lengths, max_cap=MAX_PHONEMES, round_to=8)
    fr = profile_shapes(frame_lengths, max_cap=MAX_FRAMES, round_to=8)
    longest = max(int(v) for v in frame_lengths)
    frames = ShapeProfile(
        fr.min,
        min(int(np.ceil(fr.opt / 8) * 8), MAX_FRAMES),
        min(int(np.ceil(max(fr.max, longest) * FRAME_HEADROOM / 8) * 8), MAX_FRAMES),
    )
    return TrtProfile(batch=batch, phonemes=phon, frames=frames, channels=channels)


def fit_frames(z_p: np.ndarray, y_mask: np.ndarray, frames: int) -> tuple[np.ndarray, np.ndarray]:
    """Crop or zero-pad latents ``[B, C, T]`` / mask ``[B, 1, T]`` to exactly ``frames``."""
    t = z_p.shape[2]
    if t >= frames:
        return np.ascontiguousarray(z_p[:, :, :frames]), np.ascontiguousarray(y_mask[:, :, :frames])
    pad = frames - t
    z = np.pad(z_p, ((0, 0), (0, 0), (0, pad)))
    m = np.pad(y_mask, ((0, 0), (0, 0), (0, pad)))
    return z, m


def full_calibration_batches(
    batches: Sequence[CalibrationBatch], scales: Sequence[float]
) -> list[dict[str, np.ndarray]]:
    """Calibration feeds of the ``full`` graph: ids, lengths and the voice's scales."""
    sc = np.asarray(scales, dtype=np.float32)
    return [{"input": b.ids, "input_lengths": b.lengths, "scales": sc} for b in batches]


def encoder_latents(torch, torch_engine, batch: CalibrationBatch, scales) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(z_p, y_mask, y_lengths)`` of ``batch`` from the torch text encoder + duration
    predictor: the ``flow_decoder`` graph's inputs, and the frame lengths its profile needs."""
    from studio.engine.torchvits.infer import encode_latents

    model = torch_engine.model
    device = torch_engine.torch_device
    # calibration must be reproducible: the profile and the data enter the cache key
    rng_devices = [device.index or 0] if device.type == "cuda" else []
    with torch.inference_mode(), torch.random.fork_rng(devices=rng_devices):
        torch.manual_seed(0)
        lat = encode_latents(
            model,
            torch.from_numpy(batch.ids).to(device),
            torch.from_numpy(batch.lengths).to(device),
            *scales,
        )
    return (
        lat.z_p.float().cpu().numpy(),
        lat.y_mask.float().cpu().numpy(),
        lat.y_lengths.cpu().numpy(),
    )


def calibration_feeder(
    torch, torch_engine, variant: str, cal_ids, profile: TrtProfile, scales
) -> CalibrationFeeder:
    """Calibration batches at the profile's opt shape (what TensorRT calibrates with)."""
    b = profile.batch.opt
    if variant == "full":
        batches = make_batches(cal_ids, b, length=profile.phonemes.opt, sort=False)
        feeds = full_calibration_batches(batches, scales)
        shapes = {"input": (b, profile.phonemes.opt), "input_lengths": (b,), "scales": (3,)}
        return CalibrationFeeder(feeds, shapes, {"input": np.int64, "input_lengths": np.int64, "scales": np.float32})
    feeds = []
    for batch in make_batches(cal_ids, b, sort=False):
        z_p, y_mask, _ = encoder_latents(torch, torch_engine, batch, scales)
        z_p, y_mask = fit_frames(z_p, y_mask, profile.frames.opt)
        feeds.append({"z_p": z_p.astype(np.float32), "y_mask": y_mask.astype(np.float32)})
    shapes = {
        "z_p": (b, profile.channels, profile.frames.opt),
        "y_mask": (b, 1, profile.frames.opt),
    }
    return CalibrationFeeder(feeds, shapes)


def first_that_builds(
    variants: Sequence[str], attempt: Callable[[str], Any]
) -> tuple[str, Any, dict[str, str]]:
    """Try ``attempt(variant)`` in order; ``(variant, result, {failed variant: reason})``."""
    failures: dict[str, str] = {}
    for variant in variants:
        try:
            return variant, attempt(variant), failures
        except Exception as exc:  # parse/build errors of any kind: try the next graph
            failures[variant] = f"{type(exc).__name__}: {exc}"
            _LOGGER.warning("TensorRT %s graph failed, trying the next one: %s", variant, exc)
    raise EngineError(
        "TensorRT could not build any graph: " + "; ".join(f"{k}: {v}" for k, v in failures.items())
    )


def int8_mode(trt) -> str:
    """``implicit`` (flags + calibrator, TensorRT <= 10) or ``explicit`` (Q/DQ, TensorRT >= 11)."""
    has_flag = hasattr(getattr(trt, "BuilderFlag", None), "INT8")
    return "implicit" if has_flag and hasattr(trt, "IInt8EntropyCalibrator2") else "explicit"


#: layer types whose precision is not a choice (shape plumbing, constants, casts)
_UNPINNED = ("SHAPE", "CONSTANT", "IDENTITY", "CAST", "GATHER", "SLICE", "SHUFFLE", "CONCATENATION",
             "ASSERTION", "CONDITION", "CONDITIONAL_INPUT", "CONDITIONAL_OUTPUT", "FILL", "NON_ZERO")


def _apply_precision_policy(trt, network, last_stage: Sequence[int], precision: str) -> dict[str, int]:
    """Pin every computing layer per :func:`layer_precision`; returns counts per precision.

    Every layer is placed, not only convolutions: an unpinned exp or softmax of the
    duration predictor is free to run FP16 under the FP16 flag, which moves
    durations. Layers that only move shapes or data are left alone (pinning them
    adds casts), and so are layers whose outputs are not floating point.
    """
    counts = {"fp32": 0, "fp16": 0, "int8": 0}
    compute = {trt.LayerType.CONVOLUTION, trt.LayerType.MATRIX_MULTIPLY}
    if hasattr(trt.LayerType, "DECONVOLUTION"):
        compute.add(trt.LayerType.DECONVOLUTION)
    skip = {getattr(trt.LayerType, n) for n in _UNPINNED if hasattr(trt.LayerType, n)}
    floats = {trt.DataType.FLOAT, trt.DataType.HALF}
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        if layer.type in skip:
            continue
        if any(layer.get_output(j).dtype not in floats for j in range(layer.num_outputs)):
            continue  # integer / bool outputs (lengths, masks from comparisons)
        want = layer_precision(layer.name, last_stage, compute=layer.type in compute)
        if precision == "fp16" and want == "int8":
            want = "fp16"
        counts[want] += 1
        if want == "int8":
            continue
        dt = trt.DataType.FLOAT if want == "fp32" else trt.DataType.HALF
        layer.precision = dt
        for j in range(layer.num_outputs):
            layer.set_output_type(j, dt)
    return counts


@dataclass
class BuildInfo:
    """What was built (or loaded from the cache) and how."""

    variant: str
    precision: str
    int8_mode: str
    key: str
    path: Path
    cache_hit: bool
    seconds: float
    profile: TrtProfile
    calibration_origin: str
    calibration_sentences: int
    layer_counts: dict[str, int] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def build_plan(
    trt,
    logger,
    onnx_path: Path,
    shapes,
    *,
    variant: str,
    precision: str,
    mode: str,
    feeder: CalibrationFeeder | None,
    last_stage: Sequence[int],
    workspace_bytes: int,
    calib_cache: Path,
    calib_device: str,
    counts: dict[str, int],
    notes: list[str],
    timing_cache: Path | None = None,
) -> bytes:
    """The serialized engine of ``onnx_path``; fills ``counts`` / ``notes`` for :class:`BuildInfo`.

    ``mode`` is :func:`int8_mode`'s answer (``none`` unless ``precision`` is int8);
    ``feeder`` holds the calibration batches an INT8 build needs. ``timing_cache``:
    TensorRT's kernel timings for this GPU and version, read before and written
    after the build, so a rebuild (another profile, another calibration set) skips
    most of the kernel tuning that makes up a build's minutes.
    """
    if mode == "explicit" and feeder is not None:
        onnx_path = qdq_model(onnx_path, feeder, last_stage)
        notes.append("explicit Q/DQ INT8 from ONNX Runtime's static quantizer (TensorRT >= 11 has no calibrators)")
    builder = trt.Builder(logger)
    flags = 0
    major = int(str(tensorrt_version() or "10").split(".")[0])
    if major < 10 and hasattr(trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH"):
        flags |= 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
    if mode == "explicit" and hasattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED"):
        flags |= 1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        errors = [str(parser.get_error(i)) for i in range(parser.num_errors)]
        raise EngineError(f"ONNX parser: {'; '.join(errors[:3]) or 'unknown error'}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, workspace_bytes)
    profile = builder.create_optimization_profile()
    for name, (lo, opt, hi) in shapes.items():
        profile.set_shape(name, lo, opt, hi)
    config.add_optimization_profile(profile)
    if timing_cache is not None and hasattr(config, "create_timing_cache"):
        blob = timing_cache.read_bytes() if timing_cache.is_file() else b""
        config.set_timing_cache(config.create_timing_cache(blob), False)
    weakly_typed = hasattr(trt.BuilderFlag, "FP16")  # TensorRT <= 10: precisions from flags
    if not weakly_typed and precision != "fp32":
        notes.append("no FP16 builder flag in this TensorRT (strong typing): non-INT8 layers run FP32")
    calibrator = None
    if weakly_typed and precision in ("fp16", "int8"):
        config.set_flag(trt.BuilderFlag.FP16)
    if precision == "int8" and mode == "implicit":
        import torch

        config.set_flag(trt.BuilderFlag.INT8)
        calibrator = make_calibrator(trt, torch, feeder, calib_cache, calib_device)
        config.int8_calibrator = calibrator
        config.set_calibration_profile(profile)
    if weakly_typed and precision != "fp32":
        counts.update(_apply_precision_policy(trt, network, last_stage, precision))
        flag = getattr(trt.BuilderFlag, "OBEY_PRECISION_CONSTRAINTS", None) or getattr(
            trt.BuilderFlag, "PREFER_PRECISION_CONSTRAINTS", None
        )
        if flag is not None:
            config.set_flag(flag)
    plan = builder.build_serialized_network(network, config)
    del calibrator  # kept alive (TensorRT holds only a raw pointer) until the build is done
    if plan is None:
        raise EngineError(f"TensorRT failed to build the {variant} engine (see the TensorRT log above)")
    if timing_cache is not None and hasattr(config, "get_timing_cache"):
        write_atomic(timing_cache, bytes(memoryview(config.get_timing_cache().serialize())))
    return bytes(plan)


__all__ = [
    "BuildInfo",
    "DEFAULT_BATCH",
    "FRAME_HEADROOM",
    "MAX_FRAMES",
    "MAX_PHONEMES",
    "TrtProfile",
    "DEFAULT_VARIANTS",
    "VARIANT_ORDER",
    "build_plan",
    "count_over_profile",
    "calibration_feeder",
    "encoder_latents",
    "feed_device_buffers",
    "first_that_builds",
    "fit_frames",
    "full_calibration_batches",
    "int8_mode",
    "layer_precision",
    "make_profile",
    "qdq_model",
]
