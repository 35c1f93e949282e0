"""The Triton model configuration (``config.pbtxt``) of a voice, from measured figures.

Why figures and not constants: how many sentences a batch should hold, how long
the dynamic batcher may wait for company and how many model instances a server
runs are properties of the machine and the preset, and ``studio bench`` measures
them (its batch sweep, latency and streams). :func:`figures_from_bench` turns a
``bench.json`` row into :class:`ServingFigures`; without a row the figures fall
back to the sweep recorded in :mod:`studio.engine.serving.batched` (CPU) or its
measured CUDA default, and the config says which source it used.

Why validate with protobuf: Triton rejects a bad config only when the server loads
the model, on the server, far from the person who exported it. Parsing the text
with ``google.protobuf.text_format`` against ``model_config.proto`` (as
``tritonclient`` ships it) catches unknown fields, wrong types and bad enum values
here, and :func:`validate_config` adds the rules the schema cannot state (batch
sizes within ``max_batch_size``, the interface the client speaks).

The interface (batch dimension implied by ``max_batch_size``)::

    phoneme_ids      INT64 [-1]  ids, padded with the voice's pad id
    phoneme_lengths  INT64 [1]   each item's real id count
    scales           FP32  [3]   noise, length, noise_w (the batch uses the first row)
    audio            FP32  [-1]  audio, padded to the longest item
    audio_lengths    INT64 [1]   each item's own sample count
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from studio.core.errors import EngineError
from studio.engine.base import CUDA_BATCH

INPUT_IDS = "phoneme_ids"
INPUT_LENGTHS = "phoneme_lengths"
INPUT_SCALES = "scales"
OUTPUT_AUDIO = "audio"
OUTPUT_LENGTHS = "audio_lengths"

#: (name, Triton type, dims without the batch dimension)
INPUTS: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    (INPUT_IDS, "TYPE_INT64", (-1,)),
    (INPUT_LENGTHS, "TYPE_INT64", (1,)),
    (INPUT_SCALES, "TYPE_FP32", (3,)),
)
OUTPUTS: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    (OUTPUT_AUDIO, "TYPE_FP32", (-1,)),
    (OUTPUT_LENGTHS, "TYPE_INT64", (1,)),
)

#: a batch size is "preferred" when its measured speed is within this share of the best
PREFERRED_WITHIN = 0.85
#: the batcher waits at most this share of one sentence's latency for more requests
QUEUE_SHARE_OF_LATENCY = 0.1

#: The CPU batch sweep measured in :mod:`studio.engine.serving.batched` (batch size,
#: x real time; ONNX, 2 cores), used when no bench.json row has a sweep of its own.
RECORDED_CPU_SWEEP: tuple[tuple[int, float], ...] = ((1, 4.3), (2, 4.9), (4, 4.1), (8, 3.8))
#: one sentence's latency on that machine (~2.7 s of audio at 4.3x real time)
RECORDED_CPU_LATENCY_S = 0.63

#: the local CUDA batcher's default (``studio.engine.serving.batched``): batches of
#: CUDA_BATCH, 20 ms wait -- used for GPU configs until a GPU bench.json has a sweep
RECORDED_CUDA_WAIT_S = 0.02

Kind = Literal["cpu", "gpu"]


@dataclass(frozen=True)
class ServingFigures:
    """What the config's batching and instance numbers are made of, and where they came from."""

    max_batch_size: int
    preferred_batch_sizes: tuple[int, ...]
    max_queue_delay_us: int
    instances: int
    kind: Kind
    source: str

    def __post_init__(self) -> None:
        if self.max_batch_size < 1 or self.instances < 1:
            raise EngineError(f"serving figures out of range: {self}")


def _sweep_figures(sweep: Sequence[tuple[int, float]]) -> tuple[int, tuple[int, ...]]:
    """(max batch size, preferred sizes) from (batch size, speed) points."""
    points = sorted((int(b), float(x)) for b, x in sweep if b >= 1 and x > 0)
    if not points:
        raise EngineError("the batch sweep has no usable points")
    best = max(x for _, x in points)
    good = [b for b, x in points if x >= PREFERRED_WITHIN * best]
    preferred = tuple(b for b in good if b > 1) or (max(good),)
    return max(good), preferred


def _queue_delay_us(latency_s: float) -> int:
    return int(min(100_000, max(100, latency_s * QUEUE_SHARE_OF_LATENCY * 1e6)))


def figures_from_bench(bench: Mapping[str, Any] | None, preset: str, device: str) -> ServingFigures:
    """Figures for ``preset`` from a ``studio bench`` result (``bench.json``'s dict).

    Uses the row's ``batch_sweep`` (preferred sizes, max batch size),
    ``latency_p50_s`` (queue delay) and ``streams`` (CPU instances); anything missing
    comes from the recorded figures (see the module docstring).
    """
    kind: Kind = "gpu" if device.startswith("cuda") else "cpu"
    row = ((bench or {}).get("presets") or {}).get(preset) or {}
    sweep = [(p.get("batch_size", 0), p.get("x_real_time", 0)) for p in row.get("batch_sweep") or []
             if isinstance(p, Mapping)]
    latency = row.get("latency_p50_s")
    sources = []
    if sweep:
        max_batch, preferred = _sweep_figures(sweep)
        sources.append(f"batch sweep of {preset}")
    elif kind == "gpu":
        max_batch, preferred = CUDA_BATCH, (CUDA_BATCH // 2, CUDA_BATCH)
        latency = latency or RECORDED_CUDA_WAIT_S / QUEUE_SHARE_OF_LATENCY
        sources.append("the CUDA batch default of the local batcher")
    else:
        max_batch, preferred = _sweep_figures(RECORDED_CPU_SWEEP)
        sources.append("the recorded CPU batch sweep")
    if not isinstance(latency, (int, float)) or latency <= 0:
        latency = RECORDED_CPU_LATENCY_S
    else:
        sources.append(f"latency p50 {latency:.3f} s")
    streams = row.get("streams")
    instances = int(streams) if kind == "cpu" and isinstance(streams, int) and streams > 0 else 1
    return ServingFigures(max_batch, preferred, _queue_delay_us(float(latency)), instances, kind, ", ".join(sources))


@dataclass(frozen=True)
class ModelConfig:
    """One model's config: the interface, the format and the figures."""

    name: str
    figures: ServingFigures
    platform: Literal["onnxruntime_onnx", "tensorrt_plan"] = "onnxruntime_onnx"
    fp16: bool = False
    cpu_threads: int | None = None
    extra_notes: tuple[str, ...] = field(default=())

    def to_pbtxt(self) -> str:
        """The ``config.pbtxt`` text (protobuf text format)."""
        f = self.figures
        lines = [f"# figures from {f.source}", *(f"# {n}" for n in self.extra_notes),
                 f'name: "{self.name}"', f'platform: "{self.platform}"', f"max_batch_size: {f.max_batch_size}"]
        for section, tensors in (("input", INPUTS), ("output", OUTPUTS)):
            body = ",\n".join(
                f'  {{ name: "{n}" data_type: {t} dims: [ {", ".join(map(str, d))} ] }}' for n, t, d in tensors
            )
            lines.append(f"{section} [\n{body}\n]")
        preferred = ", ".join(str(b) for b in f.preferred_batch_sizes)
        lines.append(f"dynamic_batching {{ preferred_batch_size: [ {preferred} ] "
                     f"max_queue_delay_microseconds: {f.max_queue_delay_us} }}")
        kind = "KIND_GPU" if f.kind == "gpu" else "KIND_CPU"
        lines.append(f"instance_group [ {{ count: {f.instances} kind: {kind} }} ]")
        if self.platform == "tensorrt_plan":
            lines.append("optimization { cuda { graphs: true } }")
        elif f.kind == "gpu" and self.fp16:
            lines.append('optimization { execution_accelerators { gpu_execution_accelerator: [ { name: "tensorrt" '
                         'parameters { key: "precision_mode" value: "FP16" } } ] } }')
        if self.cpu_threads:
            lines.append(f'parameters {{ key: "intra_op_thread_count" '
                         f'value: {{ string_value: "{self.cpu_threads}" }} }}')
        return "\n".join(lines) + "\n"


def parse_config(text: str):  # -> tritonclient.grpc.model_config_pb2.ModelConfig
    """Parse ``config.pbtxt`` text with Triton's own schema; EngineError with the parser's
    message (line and column) when it does not conform."""
    try:
        from google.protobuf import text_format
        from tritonclient.grpc import model_config_pb2
    except ImportError as exc:
        raise EngineError("validating a Triton config needs tritonclient[grpc] "
                          f"(pip install 'audiobook-studio[triton]'): {exc}") from exc
    message = model_config_pb2.ModelConfig()
    try:
        text_format.Parse(text, message)
    except text_format.ParseError as exc:
        raise EngineError(f"config.pbtxt does not match Triton's model-config schema: {exc}") from exc
    return message


def validate_config(text: str):  # -> model_config_pb2.ModelConfig
    """:func:`parse_config` plus the rules the schema cannot express; returns the message."""
    from tritonclient.grpc import model_config_pb2 as pb

    cfg = parse_config(text)
    problems = []
    if cfg.max_batch_size < 1:
        problems.append("max_batch_size must be at least 1 (the client sends batches)")
    for b in cfg.dynamic_batching.preferred_batch_size:
        if not 1 <= b <= cfg.max_batch_size:
            problems.append(f"preferred batch size {b} is outside 1..max_batch_size ({cfg.max_batch_size})")
    for section, expected in (("input", INPUTS), ("output", OUTPUTS)):
        got = {t.name: (pb.DataType.Name(t.data_type), tuple(t.dims)) for t in getattr(cfg, section)}
        for name, dtype, dims in expected:
            if got.get(name) != (dtype, dims):
                problems.append(f"{section} {name} must be {dtype} {list(dims)}, is {got.get(name)}")
    for group in cfg.instance_group:
        if group.count < 1:
            problems.append("an instance group needs a count of at least 1")
    if problems:
        raise EngineError("config.pbtxt is not a studio voice model: " + "; ".join(problems))
    return cfg
