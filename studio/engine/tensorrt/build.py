"""Turning an exported VITS graph into a TensorRT plan: profile, precision, calibration.

The optimization profile's ``min/opt/max`` come from the project's own sentence
lengths (:func:`make_profile`) because TensorRT tunes kernels for *opt* and
rejects anything outside *min..max*; calibration data is batched at *opt* too.

Precision policy (same reasoning as the CPU INT8 preset, :func:`layer_precision`):
the text encoder and duration predictor stay FP32 (they decide the durations, so
the audio length), the decoder's last stage and ``conv_post`` (they write the
waveform) at most FP16; everything else may run INT8. TensorRT 8.6-10.x gets
FP16 + INT8 builder flags and an ``IInt8EntropyCalibrator2`` whose device buffers
are torch CUDA tensors. TensorRT >= 11 removed implicit INT8 (no INT8/FP16 flags,
no calibrators); there the graph is quantized *explicitly* first (Q/DQ nodes from
ONNX Runtime's static quantizer, fed by the same calibration batches) and built
strongly typed.

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
from studio.engine.tensorrt.profile import CalibrationBatch, CalibrationFeeder, ShapeProfile, make_batches, profile_shapes
from studio.engine.tensorrt.cache import ids_digest
from studio.engine.tensorrt.runtime import tensorrt_version

_LOGGER = logging.getLogger(__name__)

VARIANT_ORDER = ("full", "flow_decoder")

#: default batch dimension of the optimization profile
DEFAULT_BATCH = ShapeProfile(1, 8, 64)
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

    Frames get :data:`FRAME_HEADROOM` on opt/max so slower speech still fits.
    """
    phon = profile_shapes(id_lengths, max_cap=MAX_PHONEMES, round_to=8)
    fr = profile_shapes(frame_lengths, max_cap=MAX_FRAMES, round_to=8)
    frames = ShapeProfile(
        fr.min,
        min(int(np.ceil(fr.opt / 8) * 8), MAX_FRAMES),
        min(int(np.ceil(fr.max * FRAME_HEADROOM / 8) * 8), MAX_FRAMES),
    )
    return TrtProfile(batch=batch, phonemes=phon, frames=frames, channels=channels)


def layer_precision(name: str, last_stage_resblocks: Sequence[int] = (6, 7, 8)) -> str:
    """The precision policy for one conv/matmul layer, from its ONNX/TensorRT name.

    ``fp32``: text encoder and duration predictor (they decide durations, hence
    the audio length). ``fp16``: decoder ``conv_post`` and the last upsampling
    stage's resblocks (they write the waveform; INT8 there raises the noise floor
    audibly in pauses). ``int8``: everything else (flow, early decoder stages).
    """
    if "text_encoder/" in name or "duration_predictor/" in name or "/enc_p/" in name or "/dp/" in name:
        return "fp32"
    if "conv_post" in name:
        return "fp16"
    for k in last_stage_resblocks:
        if f"resblocks.{k}/" in name:
            return "fp16"
    return "int8"


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
    from studio.engine.torchvits.export import encode_latents

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


def feed_device_buffers(
    feeder: CalibrationFeeder,
    names: Sequence[str],
    buffers: dict[str, Any],
    to_device: Callable[[np.ndarray], Any],
) -> list[int] | None:
    """One ``get_batch`` of a TensorRT calibrator, minus TensorRT.

    Takes the feeder's next batch, copies each array into a persistent device
    buffer (created with ``to_device`` on first use, reused after: TensorRT keeps
    the pointers only until the next call) and returns the buffers' addresses in
    ``names`` order, or None when calibration data is exhausted.
    """
    arrays = feeder.next_batch(names)
    if arrays is None:
        return None
    ptrs = []
    for name, arr in zip(names, arrays):
        buf = buffers.get(name)
        if buf is None or tuple(buf.shape) != arr.shape:
            buf = to_device(arr)
            buffers[name] = buf
        else:
            import torch

            buf.copy_(torch.from_numpy(arr))
        ptrs.append(int(buf.data_ptr()))
    return ptrs


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


def _make_calibrator(trt, torch, feeder: CalibrationFeeder, cache_file: Path | None, device: str = "cuda"):
    """An ``IInt8EntropyCalibrator2`` fed from ``feeder`` through torch CUDA buffers."""

    class EntropyCalibrator(trt.IInt8EntropyCalibrator2):
        def __init__(self) -> None:
            trt.IInt8EntropyCalibrator2.__init__(self)
            self.feeder = feeder
            self.buffers: dict[str, Any] = {}
            self.cache_file = cache_file

        def get_batch_size(self) -> int:
            return int(self.feeder.batch_size)

        def get_batch(self, names, *args):  # TRT passes (names) or (names, p_str)
            return feed_device_buffers(
                self.feeder, list(names), self.buffers, lambda a: torch.from_numpy(a).to(device).contiguous()
            )

        def read_calibration_cache(self):
            if self.cache_file is not None and self.cache_file.is_file():
                return self.cache_file.read_bytes()
            return None

        def write_calibration_cache(self, cache) -> None:
            if self.cache_file is not None:
                self.cache_file.parent.mkdir(parents=True, exist_ok=True)
                self.cache_file.write_bytes(bytes(cache))

    return EntropyCalibrator()


def _apply_precision_policy(trt, network, last_stage: Sequence[int], precision: str) -> dict[str, int]:
    """Pin conv/matmul layers per :func:`layer_precision`; returns counts per precision."""
    counts = {"fp32": 0, "fp16": 0, "int8": 0}
    compute = {trt.LayerType.CONVOLUTION, trt.LayerType.MATRIX_MULTIPLY}
    if hasattr(trt.LayerType, "DECONVOLUTION"):
        compute.add(trt.LayerType.DECONVOLUTION)
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        if layer.type not in compute:
            continue
        want = layer_precision(layer.name, last_stage)
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
) -> bytes:
    """The serialized engine of ``onnx_path``; fills ``counts`` / ``notes`` for :class:`BuildInfo`.

    ``mode`` is :func:`int8_mode`'s answer (``none`` unless ``precision`` is int8);
    ``feeder`` holds the calibration batches an INT8 build needs.
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
    weakly_typed = hasattr(trt.BuilderFlag, "FP16")  # TensorRT <= 10: precisions from flags
    if not weakly_typed and precision != "fp32":
        notes.append("no FP16 builder flag in this TensorRT (strong typing): non-INT8 layers run FP32")
    calibrator = None
    if weakly_typed and precision in ("fp16", "int8"):
        config.set_flag(trt.BuilderFlag.FP16)
    if precision == "int8" and mode == "implicit":
        import torch

        config.set_flag(trt.BuilderFlag.INT8)
        calibrator = _make_calibrator(trt, torch, feeder, calib_cache, calib_device)
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
    return bytes(plan)


def qdq_model(onnx_path: Path, feeder: CalibrationFeeder, last_stage: Sequence[int]) -> Path:
    """TensorRT >= 11: explicit Q/DQ INT8 via ONNX Runtime's static quantizer, same batches."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    model = onnx.load(str(onnx_path), load_external_data=False)
    convs = [n.name for n in model.graph.node if n.op_type in ("Conv", "ConvTranspose", "MatMul")]
    exclude = [n for n in convs if layer_precision(n, last_stage) != "int8"]
    names = list(feeder.shapes)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            feeder.reset()

        def get_next(self):
            arrays = feeder.next_batch(names)
            return None if arrays is None else dict(zip(names, arrays))

    out = onnx_path.with_name(onnx_path.stem + f"-qdq-{ids_digest([[len(feeder)]])}.onnx")
    quantize_static(
        str(onnx_path), str(out), Reader(),
        quant_format=QuantFormat.QDQ, op_types_to_quantize=["Conv"], nodes_to_exclude=exclude,
        per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
        calibrate_method=CalibrationMethod.Entropy,
        extra_options={"ActivationSymmetric": True, "WeightSymmetric": True},
    )
    return out


__all__ = [
    "BuildInfo",
    "DEFAULT_BATCH",
    "FRAME_HEADROOM",
    "MAX_FRAMES",
    "MAX_PHONEMES",
    "TrtProfile",
    "VARIANT_ORDER",
    "build_plan",
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
