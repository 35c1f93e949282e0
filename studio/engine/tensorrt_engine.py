"""The ``tensorrt-int8`` preset: the VITS voice as a TensorRT engine on an NVIDIA GPU.

Pipeline (all on the user's machine, cached):

1. **Export** the torch VITS (:mod:`studio.engine.onnx_export`) to ONNX: the whole
   graph first; if TensorRT cannot parse or build it, the ``flow_decoder`` graph
   (reverse flow + HiFi-GAN, ~90% of the FLOPs, convolutions only), with the text
   encoder and duration predictor kept in torch on the same GPU.
2. **Calibrate** with real sentences (:mod:`studio.engine.calibration`: the file in
   ``$CALIBRATION_DATA_PATH``, else the project's sentences, else a built-in set),
   run through the voice's own front end and batched at the profile's *opt* shape.
3. **Build** with an optimization profile whose ``min/opt/max`` come from the
   sentence-length distribution (:func:`~studio.engine.calibration.profile_shapes`).
   TensorRT 8.6-10.x: FP16 + INT8 builder flags and an ``IInt8EntropyCalibrator2``
   whose device buffers are torch CUDA tensors. TensorRT >= 11 removed implicit
   INT8 (no INT8/FP16 flags, no calibrators); there the graph is quantized
   *explicitly* first (Q/DQ nodes from ONNX Runtime's static quantizer, fed by the
   same calibration batches) and built strongly typed.
   Precision policy (same reasoning as the CPU INT8 preset): the text encoder and
   duration predictor stay FP32 (they decide the durations, so the audio length),
   the decoder's last stage and ``conv_post`` (they write the waveform) at most
   FP16; everything else may run INT8.
4. **Cache** the serialized engine under
   ``$STUDIO_CACHE_DIR/tensorrt/<sha256>.plan`` keyed by (source model hash,
   TensorRT version, GPU, precision, profile, variant, calibration set):
   :func:`engine_cache_key` is pure and tested without TensorRT.
5. **Run** with torch CUDA tensors as every input/output buffer
   (``set_tensor_address`` + ``execute_async_v3`` on a torch stream); the full
   graph's audio length is data dependent, so its output goes through an
   ``IOutputAllocator`` that allocates torch tensors.

``tensorrt`` is imported lazily inside; importing this module needs neither
TensorRT nor CUDA, and everything that does not talk to TensorRT (cache key,
profile shapes, precision policy, calibration feeding, fallback and cache logic)
is plain Python.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from studio.core.errors import EngineError, PresetUnavailable
from studio.engine.base import Engine, SynthesisSettings
from studio.engine.calibration import (
    CalibrationBatch,
    CalibrationFeeder,
    ShapeProfile,
    calibration_sentences,
    make_batches,
    profile_shapes,
    select_calibration_set,
    sentences_to_ids,
)

if TYPE_CHECKING:  # pragma: no cover
    import torch

_LOGGER = logging.getLogger(__name__)

CACHE_ENV = "STUDIO_CACHE_DIR"
PRECISIONS = ("int8", "fp16", "fp32")
VARIANT_ORDER = ("full", "flow_decoder")

#: default batch dimension of the optimization profile
DEFAULT_BATCH = ShapeProfile(1, 8, 64)
#: hard caps on the length dimensions (ids / latent frames) of the profile
MAX_PHONEMES = 600
MAX_FRAMES = 4096
#: headroom on the frame profile for slower speech (length_scale > 1) than calibrated
FRAME_HEADROOM = 1.5


# ------------------------------------------------------------------ pure helpers


def default_cache_dir() -> Path:
    """``$STUDIO_CACHE_DIR`` or ``~/.cache/studio`` (shared with the CPU INT8 preset)."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "studio"


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


# ------------------------------------------------------------------ environment


def tensorrt_version() -> str | None:
    """The installed TensorRT's version, None when it is not importable."""
    try:
        import tensorrt as trt
    except Exception:
        return None
    return str(getattr(trt, "__version__", "unknown"))


def require_tensorrt_and_cuda():
    """``(tensorrt module, torch module)`` or PresetUnavailable saying what is missing."""
    try:
        import torch
    except ImportError as exc:
        raise PresetUnavailable(f"torch is not installed ({exc})") from exc
    if not torch.cuda.is_available():
        raise PresetUnavailable("no CUDA device: torch.cuda.is_available() is False")
    try:
        import tensorrt as trt
    except ImportError as exc:
        raise PresetUnavailable(f"TensorRT is not installed (pip install tensorrt): {exc}") from exc
    return trt, torch


def _gpu_token(torch) -> str:
    index = torch.cuda.current_device()
    major, minor = torch.cuda.get_device_capability(index)
    return f"{torch.cuda.get_device_name(index)} sm_{major}{minor}"


# ------------------------------------------------------------------ TensorRT glue


def _torch_dtype(trt, torch, dtype):
    table = {
        trt.DataType.FLOAT: torch.float32,
        trt.DataType.HALF: torch.float16,
        trt.DataType.INT32: torch.int32,
        trt.DataType.INT8: torch.int8,
        trt.DataType.BOOL: torch.bool,
    }
    if hasattr(trt.DataType, "INT64"):
        table[trt.DataType.INT64] = torch.int64
    if hasattr(trt.DataType, "BF16"):
        table[trt.DataType.BF16] = torch.bfloat16
    return table[dtype]


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


def _make_output_allocator(trt, torch):
    """An ``IOutputAllocator`` handing TensorRT torch CUDA memory for data-dependent outputs."""

    class TorchOutputAllocator(trt.IOutputAllocator):
        def __init__(self) -> None:
            trt.IOutputAllocator.__init__(self)
            self.buffers: dict[str, Any] = {}
            self.shapes: dict[str, tuple[int, ...]] = {}

        def _alloc(self, name: str, size: int) -> int:
            buf = self.buffers.get(name)
            if buf is None or buf.numel() < size:
                buf = torch.empty(max(int(size), 1), dtype=torch.uint8, device="cuda")
                self.buffers[name] = buf
            return int(buf.data_ptr())

        def reallocate_output(self, tensor_name, memory, size, alignment):  # TRT 8.6 - 10
            return self._alloc(tensor_name, size)

        def reallocate_output_async(self, tensor_name, memory, size, alignment, stream=None):  # TRT >= 10
            return self._alloc(tensor_name, size)

        def notify_shape(self, tensor_name, shape) -> None:
            self.shapes[tensor_name] = tuple(int(d) for d in shape)

    return TorchOutputAllocator()


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


class TrtRunner:
    """A deserialized engine + execution context driven with torch CUDA tensors."""

    def __init__(self, trt, torch, plan: bytes, logger) -> None:
        self.trt, self.torch = trt, torch
        self.runtime = trt.Runtime(logger)
        self.engine = self.runtime.deserialize_cuda_engine(plan)
        if self.engine is None:
            raise EngineError("TensorRT could not deserialize the cached engine (stale cache?)")
        self.context = self.engine.create_execution_context()
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        for i in range(self.engine.num_io_tensors):
            name = self.engine.get_tensor_name(i)
            mode = self.engine.get_tensor_mode(name)
            (self.inputs if mode == trt.TensorIOMode.INPUT else self.outputs).append(name)
        self.stream = torch.cuda.Stream()
        self.allocator = _make_output_allocator(trt, torch)
        self._lock = threading.Lock()

    def dtype(self, name: str):
        return _torch_dtype(self.trt, self.torch, self.engine.get_tensor_dtype(name))

    def __call__(self, feeds: Mapping[str, "torch.Tensor"]) -> dict[str, "torch.Tensor"]:
        torch = self.torch
        # inputs were produced on the caller's stream: order our stream after it
        self.stream.wait_stream(torch.cuda.current_stream())
        with self._lock, torch.cuda.stream(self.stream):
            keep = []
            for name in self.inputs:
                t = feeds[name].to(device="cuda", dtype=self.dtype(name)).contiguous()
                keep.append(t)
                self.context.set_input_shape(name, tuple(t.shape))
                self.context.set_tensor_address(name, int(t.data_ptr()))
            outs: dict[str, Any] = {}
            dynamic: list[str] = []
            for name in self.outputs:
                shape = tuple(self.context.get_tensor_shape(name))
                if any(d < 0 for d in shape):
                    self.context.set_output_allocator(name, self.allocator)
                    dynamic.append(name)
                else:
                    out = torch.empty(shape, dtype=self.dtype(name), device="cuda")
                    outs[name] = out
                    self.context.set_tensor_address(name, int(out.data_ptr()))
            if not self.context.execute_async_v3(self.stream.cuda_stream):
                raise EngineError("TensorRT execution failed")
            self.stream.synchronize()
            for name in dynamic:
                shape = self.allocator.shapes[name]
                dtype = self.dtype(name)
                n = int(np.prod(shape)) if shape else 1
                raw = self.allocator.buffers[name]
                outs[name] = raw[: n * torch.empty((), dtype=dtype).element_size()].view(dtype).reshape(shape).clone()
            del keep
        return outs

    def close(self) -> None:
        self.context = None
        self.engine = None
        self.runtime = None
        self.allocator = None


# ------------------------------------------------------------------ the engine


class TensorRTEngine(Engine):
    """A Piper voice as a TensorRT engine (INT8 + FP16 by default) on CUDA.

    ``voice``: a VoiceInfo (Piper) or a Piper ``.onnx`` path. ``precision``:
    ``int8`` (default), ``fp16`` or ``fp32``. ``calibration_sentences``: the
    project's sentences (``$CALIBRATION_DATA_PATH`` wins, the built-in set is the
    last resort). ``variants``: graphs to try in order. ``language``: the language
    passed to the front end for calibration sentences (default: the voice's).
    """

    name = "tensorrt"

    def __init__(
        self,
        voice,
        *,
        device: str = "cuda",
        precision: str = "int8",
        calibration_sentences: Sequence[str] | None = None,
        cache_dir: str | Path | None = None,
        variants: Sequence[str] = VARIANT_ORDER,
        batch_profile: ShapeProfile = DEFAULT_BATCH,
        max_calibration_sentences: int = 64,
        calibration_batch: int | None = None,
        language: str | None = None,
        workspace_gib: float = 4.0,
        threads: int | None = None,
    ) -> None:
        if precision not in PRECISIONS:
            raise EngineError(f"unknown TensorRT precision {precision!r}; choose one of {PRECISIONS}")
        if not str(device).startswith("cuda"):
            raise EngineError("TensorRT runs on CUDA devices only")
        bad = [v for v in variants if v not in VARIANT_ORDER]
        if bad or not variants:
            raise EngineError(f"unknown TensorRT graph variant(s) {bad}; choose from {VARIANT_ORDER}")
        from studio.engine.torch_vits import TorchVitsEngine

        # fp32 torch model: front end, export source, and the encoder half of flow_decoder
        self.torch_engine = TorchVitsEngine(voice, device=str(device), dtype="float32", threads=threads)
        self.device = str(device)
        self.precision = precision
        self.variants = tuple(variants)
        self.batch_profile = batch_profile
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._calibration_input = list(calibration_sentences) if calibration_sentences else None
        self.max_calibration_sentences = max_calibration_sentences
        self.calibration_batch = calibration_batch
        self.language = language or self.torch_engine.config.language_family or "en"
        self.workspace_bytes = int(workspace_gib * (1 << 30))
        self.build_info: BuildInfo | None = None
        self.stats = {"batches": 0, "items": 0, "torch_fallback_items": 0}
        self._calib_device = str(device)
        self._runner: TrtRunner | None = None
        self._lock = threading.RLock()

    # ------------------------------------------------------------- interface

    @property
    def sample_rate(self) -> int:
        return self.torch_engine.sample_rate

    @property
    def default_settings(self) -> SynthesisSettings:
        return self.torch_engine.default_settings

    def text_to_ids(self, text: str, language: str) -> list[int]:
        return self.torch_engine.text_to_ids(text, language)

    def load(self) -> None:
        with self._lock:
            if self._runner is not None:
                return
            trt, torch = require_tensorrt_and_cuda()
            self.torch_engine.load()
            self._runner = self._prepare(trt, torch)

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        if not ids:
            return []
        self.load()
        assert self.build_info is not None
        results: list[np.ndarray | None] = [None] * len(ids)
        prof = self.build_info.profile
        fits, too_long = [], []
        for i, seq in enumerate(ids):
            if len(seq) == 0:
                results[i] = np.zeros(0, dtype=np.float32)
            elif self.build_info.variant == "full" and len(seq) > prof.phonemes.max:
                too_long.append(i)
            else:
                fits.append(i)
        step = prof.batch.max
        for start in range(0, len(fits), step):
            chunk = fits[start : start + step]
            for i, audio in zip(chunk, self._run([ids[i] for i in chunk], settings)):
                results[i] = audio
        if too_long:  # longer than the profile allows: the torch engine speaks them
            self.stats["torch_fallback_items"] += len(too_long)
            for i, audio in zip(too_long, self.torch_engine.synthesize_batch([ids[i] for i in too_long], settings)):
                results[i] = audio
        self.stats["items"] += len(ids)
        return [r for r in results if r is not None]

    def close(self) -> None:
        with self._lock:
            if self._runner is not None:
                self._runner.close()
                self._runner = None
            self.torch_engine.close()
            from studio.engine.cuda_info import release_cuda_cache

            release_cuda_cache("tensorrt engine closed")

    def describe(self) -> str:
        info = self.build_info
        if info is None:
            return f"TensorRT {self.precision} (not built yet; load() builds or loads the cached engine)"
        origin = "cached engine" if info.cache_hit else f"built in {info.seconds:.0f} s"
        graph = (
            "whole VITS graph in TensorRT"
            if info.variant == "full"
            else "flow + decoder in TensorRT, text encoder + duration predictor in torch (CUDA, FP32)"
        )
        text = (
            f"TensorRT {tensorrt_version()} {info.precision} ({info.int8_mode} INT8), {graph}; {origin}; "
            f"profile {info.profile.token()}; calibrated on {info.calibration_sentences} sentences "
            f"({info.calibration_origin})"
        )
        if info.layer_counts:
            c = info.layer_counts
            text += f"; conv/matmul layers: {c.get('int8', 0)} may run INT8, {c.get('fp16', 0)} FP16, {c.get('fp32', 0)} FP32"
        for variant, reason in info.failures.items():
            text += f"; {variant} graph failed: {reason}"
        for note in info.notes:
            text += f"; {note}"
        if self.stats["torch_fallback_items"]:
            text += f"; {self.stats['torch_fallback_items']} over-long items ran on torch"
        return text

    # -------------------------------------------------------------- building

    def _calibration(self):
        """(origin, selected sentences, their ids)."""
        source = calibration_sentences(self._calibration_input)
        chosen = select_calibration_set(source.sentences, self.max_calibration_sentences)
        ids = sentences_to_ids(chosen, self.torch_engine.text_to_ids, self.language)
        if not ids:
            raise EngineError("no calibration sentence produced phoneme ids")
        return source.origin, chosen, ids

    def _latents(self, torch, batch: CalibrationBatch, scales) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from studio.engine.onnx_export import encode_latents

        model = self.torch_engine.model
        device = self.torch_engine.torch_device
        # calibration must be reproducible: the profile and the data enter the cache key
        rng_devices = [device.index or 0] if device.type == "cuda" else []
        with torch.inference_mode(), torch.random.fork_rng(devices=rng_devices):
            torch.manual_seed(0)
            lat = encode_latents(
                model,
                torch.from_numpy(batch.ids).to(device),
                torch.from_numpy(batch.lengths).to(device),
                scales[0],
                scales[1],
                scales[2],
            )
        return (
            lat.z_p.float().cpu().numpy(),
            lat.y_mask.float().cpu().numpy(),
            lat.y_lengths.cpu().numpy(),
        )

    def _export(self, variant: str, source_hash: str) -> Path:
        """Exported ONNX for ``variant``, cached by source model, torch version and opset."""
        import torch

        from studio.engine.onnx_export import DEFAULT_OPSET, export_onnx

        tag = hashlib.sha256(f"{source_hash}|{variant}|{torch.__version__}|{DEFAULT_OPSET}".encode()).hexdigest()[:24]
        path = self.cache_dir / "onnx" / f"{variant}-{tag}.onnx"
        if not path.is_file():
            tmp = path.with_suffix(".tmp.onnx")
            export_onnx(self.torch_engine, tmp, variant)
            os.replace(tmp, path)
        return path

    def _prepare(self, trt, torch) -> TrtRunner:
        from studio.engine.onnx_export import file_sha256

        logger = trt.Logger(trt.Logger.WARNING)
        mode = int8_mode(trt) if self.precision == "int8" else "none"
        origin, chosen, cal_ids = self._calibration()
        scales = tuple(
            (self.default_settings.noise_scale, self.default_settings.length_scale, self.default_settings.noise_w)
        )
        cal_batch = self.calibration_batch or min(self.batch_profile.opt, max(1, len(cal_ids)))
        id_lengths = [len(s) for s in cal_ids]
        # frame lengths of the calibration set at the voice's own settings
        frame_lengths: list[int] = []
        channels = 0
        for b in make_batches(cal_ids, cal_batch, fill_last=False):
            z_p, _, y_lengths = self._latents(torch, b, scales)
            frame_lengths.extend(int(n) for n in y_lengths)
            channels = int(z_p.shape[1])
        profile = make_profile(id_lengths, frame_lengths, batch=self.batch_profile, channels=channels)
        source_hash = file_sha256(self.torch_engine.model_path)
        dec = self.torch_engine.model.waveform_decoder
        last_stage = tuple(range((dec.num_upsamples - 1) * dec.num_kernels, dec.num_upsamples * dec.num_kernels))
        gpu = _gpu_token(torch)

        def attempt(variant: str) -> tuple[bytes, BuildInfo]:
            shapes = profile.input_shapes(variant)
            key = engine_cache_key(
                source_hash, tensorrt_version() or "?", gpu, self.precision, shapes,
                variant=variant, extra=f"{mode};cal={ids_digest(cal_ids)};scales={scales}",
            )
            plan_path = engine_cache_path(self.cache_dir, key)
            counts: dict[str, int] = {}
            notes: list[str] = []
            start = time.perf_counter()

            def build() -> bytes:
                onnx_path = self._export(variant, source_hash)
                feeder = self._feeder(torch, variant, cal_ids, profile, scales) if self.precision == "int8" else None
                return self._build(trt, logger, onnx_path, variant, shapes, feeder, mode, last_stage, counts,
                                   plan_path.with_suffix(".calib"), notes)

            failed = plan_path.with_suffix(".failed")
            if failed.is_file():
                raise EngineError(f"{failed.read_text(encoding='utf-8')} (cached; delete {failed} to retry)")
            try:
                plan, hit = load_or_build(plan_path, build)
            except EngineError as exc:  # parser/builder said no: remember, do not rebuild every time
                failed.parent.mkdir(parents=True, exist_ok=True)
                failed.write_text(str(exc), encoding="utf-8")
                raise
            info = BuildInfo(
                variant=variant, precision=self.precision, int8_mode=mode, key=key, path=plan_path,
                cache_hit=hit, seconds=time.perf_counter() - start, profile=profile,
                calibration_origin=origin, calibration_sentences=len(cal_ids), layer_counts=counts,
                notes=notes,
            )
            return plan, info

        def attempt_and_load(variant: str):
            plan, info = attempt(variant)
            runner = TrtRunner(trt, torch, plan, logger)
            if info.cache_hit:  # verified when it was built (a failed check leaves a .failed marker)
                return runner, info
            try:
                info.notes.append(self._verify(runner, info, cal_ids))
            except EngineError as exc:  # built but wrong: remember, and try the next graph
                runner.close()
                info.path.with_suffix(".failed").write_text(str(exc), encoding="utf-8")
                raise
            return runner, info

        variant, (runner, info), failures = first_that_builds(self.variants, attempt_and_load)
        info.failures = failures
        self.build_info = info
        _LOGGER.info("TensorRT ready: %s", self.describe())
        return runner

    def _feeder(self, torch, variant, cal_ids, profile: TrtProfile, scales) -> CalibrationFeeder:
        """Calibration batches at the profile's opt shape (what TensorRT calibrates with)."""
        b = profile.batch.opt
        if variant == "full":
            batches = make_batches(cal_ids, b, length=profile.phonemes.opt, sort=False)
            feeds = full_calibration_batches(batches, scales)
            shapes = {"input": (b, profile.phonemes.opt), "input_lengths": (b,), "scales": (3,)}
            return CalibrationFeeder(feeds, shapes, {"input": np.int64, "input_lengths": np.int64, "scales": np.float32})
        feeds = []
        for batch in make_batches(cal_ids, b, sort=False):
            z_p, y_mask, _ = self._latents(torch, batch, scales)
            z_p, y_mask = fit_frames(z_p, y_mask, profile.frames.opt)
            feeds.append({"z_p": z_p.astype(np.float32), "y_mask": y_mask.astype(np.float32)})
        shapes = {
            "z_p": (b, profile.channels, profile.frames.opt),
            "y_mask": (b, 1, profile.frames.opt),
        }
        return CalibrationFeeder(feeds, shapes)

    def _build(
        self, trt, logger, onnx_path: Path, variant, shapes, feeder, mode, last_stage, counts, calib_cache,
        notes: list[str] | None = None,
    ) -> bytes:
        notes = [] if notes is None else notes
        if mode == "explicit" and feeder is not None:
            onnx_path = self._qdq_model(onnx_path, feeder, last_stage)
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
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, self.workspace_bytes)
        profile = builder.create_optimization_profile()
        for name, (lo, opt, hi) in shapes.items():
            profile.set_shape(name, lo, opt, hi)
        config.add_optimization_profile(profile)
        weakly_typed = hasattr(trt.BuilderFlag, "FP16")  # TensorRT <= 10: precisions from flags
        if not weakly_typed and self.precision != "fp32":
            notes.append("no FP16 builder flag in this TensorRT (strong typing): non-INT8 layers run FP32")
        calibrator = None
        if weakly_typed and self.precision in ("fp16", "int8"):
            config.set_flag(trt.BuilderFlag.FP16)
        if self.precision == "int8" and mode == "implicit":
            import torch

            config.set_flag(trt.BuilderFlag.INT8)
            calibrator = _make_calibrator(trt, torch, feeder, calib_cache, self._calib_device)
            config.int8_calibrator = calibrator
            config.set_calibration_profile(profile)
        if weakly_typed and self.precision != "fp32":
            counts.update(_apply_precision_policy(trt, network, last_stage, self.precision))
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

    def _qdq_model(self, onnx_path: Path, feeder: CalibrationFeeder, last_stage) -> Path:
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

    # -------------------------------------------------------------- running

    def _run(self, batch: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        runner, info = self._runner, self.build_info
        if runner is None or info is None:
            raise EngineError("engine is closed")
        self.stats["batches"] += 1
        return self._run_with(runner, info, batch, settings)

    def _run_with(
        self, runner, info: BuildInfo, batch: Sequence[Sequence[int]], settings: SynthesisSettings
    ) -> list[np.ndarray]:
        """One batch (within the profile's batch size) through ``runner``; each item's own audio."""
        import torch

        from studio.engine.onnx_export import flow_decode, pad_ids, split_infer

        prof = info.profile
        pad_id = self.torch_engine.config.phoneme_id_map["_"][0]
        ids, lengths = pad_ids(batch, pad_id)
        if info.variant == "full" and ids.shape[1] < prof.phonemes.min:  # below the profile: pad (masked)
            ids = np.pad(ids, ((0, 0), (0, prof.phonemes.min - ids.shape[1])), constant_values=pad_id)
        dev = self.torch_engine.torch_device
        x = torch.from_numpy(ids).to(dev)
        xl = torch.from_numpy(lengths).to(dev)
        scales = (settings.noise_scale, settings.length_scale, settings.noise_w)
        try:
            with torch.inference_mode():
                if info.variant == "full":
                    out = runner({
                        "input": x, "input_lengths": xl,
                        "scales": torch.tensor(scales, dtype=torch.float32, device=dev),
                    })
                    audio, audio_lengths = out["output"][:, 0, :], out["output_lengths"]
                else:
                    model = self.torch_engine.model

                    def decode(z_p, y_mask):
                        frames = z_p.shape[2]
                        if frames > prof.frames.max:  # beyond the profile: torch decodes this batch
                            self.stats["torch_fallback_items"] += z_p.shape[0]
                            return flow_decode(model, z_p, y_mask)
                        if frames < prof.frames.min:  # below it: zero frames, masked, cropped after
                            pad = prof.frames.min - frames
                            z_p = torch.nn.functional.pad(z_p, (0, pad))
                            y_mask = torch.nn.functional.pad(y_mask, (0, pad))
                        return runner({"z_p": z_p.float(), "y_mask": y_mask.float()})["output"]

                    audio, audio_lengths = split_infer(
                        model, decode, x, xl, *scales, self.torch_engine.hop_length
                    )
                audio = audio.float().cpu().numpy()
                audio_lengths = audio_lengths.cpu().numpy()
        except EngineError:
            raise
        except RuntimeError as exc:
            raise EngineError(f"TensorRT synthesis failed: {exc}") from exc
        return [
            np.clip(audio[b, : int(audio_lengths[b])], -1.0, 1.0).astype(np.float32, copy=True)
            for b in range(len(batch))
        ]

    def _verify(self, runner, info: BuildInfo, cal_ids: Sequence[Sequence[int]]) -> str:
        """Run two calibration sentences with noise off through the engine and through
        torch; EngineError if lengths or waveforms disagree (a graph that built but
        computes something else must not be used). Returns a one-line result."""
        import torch

        from studio.engine.onnx_export import encode_latents, pad_ids
        from studio.engine.torch_vits import piper_vits_infer

        ordered = sorted(cal_ids, key=len)
        sample = [ordered[0], ordered[len(ordered) // 2]][: info.profile.batch.max]
        settings = SynthesisSettings(0.0, 1.0, 0.0)
        got = self._run_with(runner, info, sample, settings)
        ids, lengths = pad_ids(sample, self.torch_engine.config.phoneme_id_map["_"][0])
        dev = self.torch_engine.torch_device
        x, xl = torch.from_numpy(ids).to(dev), torch.from_numpy(lengths).to(dev)
        hop = self.torch_engine.hop_length
        model = self.torch_engine.model
        with torch.inference_mode():  # lengths first: cheap, and the commonest way to be wrong
            want_lengths = (encode_latents(model, x, xl, 0.0, 1.0, 0.0).y_lengths * hop).tolist()
            for g, n in zip(got, want_lengths):
                if abs(len(g) - int(n)) > 2 * hop:
                    raise EngineError(f"{info.variant} engine output length {len(g)} != torch {int(n)}")
            audio, alens = piper_vits_infer(model, x, xl, 0.0, 1.0, 0.0, hop)
        worst = 1.0
        for b, g in enumerate(got):
            w = np.clip(audio[b, : int(alens[b])].float().cpu().numpy(), -1.0, 1.0)
            n = min(len(g), len(w))
            corr = float(np.corrcoef(g[:n], w[:n])[0, 1]) if n > 1 and g[:n].std() > 0 and w[:n].std() > 0 else 0.0
            worst = min(worst, corr)
        floor = 0.9 if info.precision == "int8" else 0.98
        if not worst >= floor:
            raise EngineError(f"{info.variant} engine output does not match torch (correlation {worst:.3f} < {floor})")
        return f"verified against torch (noise off): correlation >= {worst:.4f}"


__all__ = [
    "TensorRTEngine",
    "TrtProfile",
    "BuildInfo",
    "engine_cache_key",
    "engine_cache_path",
    "make_profile",
    "layer_precision",
    "fit_frames",
    "feed_device_buffers",
    "load_or_build",
    "first_that_builds",
    "int8_mode",
    "tensorrt_version",
    "require_tensorrt_and_cuda",
]
