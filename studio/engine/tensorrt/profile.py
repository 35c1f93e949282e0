"""TensorRT's calibration batches and optimization profile, from real sentences.

TensorRT's implicit INT8 calibration runs at the *opt* shape of the calibration
profile, so batches can be forced to one fixed ``(batch, length)`` (pad or
truncate, and fill the last batch by cycling). :func:`profile_shapes` turns the
project's length distribution into the ``(min, opt, max)`` of an optimization
profile. :class:`CalibrationFeeder` is the part of the calibrator that needs no
TensorRT: it hands out one batch of named arrays at a time, checked against the
declared shapes. Which sentences calibrate is :mod:`studio.engine.calibration`'s
policy. Nothing here needs a GPU, torch or TensorRT.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np


@dataclass(frozen=True)
class CalibrationBatch:
    """``ids``: int64 ``[B, T]`` zero-padded; ``lengths``: int64 ``[B]`` true lengths (<= T)."""

    ids: np.ndarray
    lengths: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.ids.shape)  # type: ignore[return-value]


def make_batches(
    id_seqs: Sequence[Sequence[int]],
    batch_size: int,
    *,
    length: int | None = None,
    pad_id: int = 0,
    fill_last: bool = True,
    sort: bool = True,
) -> list[CalibrationBatch]:
    """Group id sequences into padded batches.

    ``length``: force every batch to exactly this many columns (longer items are
    truncated, shorter padded); None pads each batch to its own longest item.
    ``fill_last``: make the last batch full by cycling from the start, so every
    batch has exactly ``batch_size`` rows (what a fixed calibration shape needs).
    ``sort``: batch neighbours in length order (less padding); otherwise keep order.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if length is not None and length < 1:
        raise ValueError(f"length must be >= 1, got {length}")
    seqs = [list(s) for s in id_seqs if len(s) > 0]
    if not seqs:
        return []
    if sort:
        seqs = sorted(seqs, key=len)
    groups = [seqs[i : i + batch_size] for i in range(0, len(seqs), batch_size)]
    if fill_last and len(groups[-1]) < batch_size:
        k = 0
        while len(groups[-1]) < batch_size:
            groups[-1].append(seqs[k % len(seqs)])
            k += 1
    batches = []
    for group in groups:
        width = length if length is not None else max(len(s) for s in group)
        ids = np.full((len(group), width), pad_id, dtype=np.int64)
        lengths = np.empty(len(group), dtype=np.int64)
        for row, seq in enumerate(group):
            seq = seq[:width]
            ids[row, : len(seq)] = seq
            lengths[row] = len(seq)
        batches.append(CalibrationBatch(ids, lengths))
    return batches


# ------------------------------------------------------------------ shapes


@dataclass(frozen=True)
class ShapeProfile:
    """One dynamic dimension's ``min <= opt <= max`` for an optimization profile."""

    min: int
    opt: int
    max: int

    def __post_init__(self) -> None:
        if not (1 <= self.min <= self.opt <= self.max):
            raise ValueError(f"need 1 <= min <= opt <= max, got {self.min}/{self.opt}/{self.max}")

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.min, self.opt, self.max)

    def token(self) -> str:
        return f"{self.min}-{self.opt}-{self.max}"


def _percentile(sorted_values: Sequence[int], pct: float) -> float:
    """Linear-interpolated percentile of already sorted values (numpy's default)."""
    return float(np.percentile(np.asarray(sorted_values, dtype=np.float64), pct))


def profile_shapes(
    lengths: Iterable[int],
    *,
    opt_percentile: float = 75.0,
    max_percentile: float = 99.0,
    max_cap: int | None = None,
    round_to: int = 1,
) -> ShapeProfile:
    """``(min, opt, max)`` from a length distribution.

    ``min`` = the shortest, ``opt`` = the ``opt_percentile`` (default p75: most
    batches are padded to their longest item, so the typical *padded* length sits
    above the median), ``max`` = the ``max_percentile`` (p99, so one freak
    paragraph does not blow up every kernel's workspace), capped at ``max_cap``.
    Longer inputs than ``max`` must be split or run by the fallback path.
    ``round_to`` rounds opt/max up to a multiple (kernels like multiples of 8).
    """
    values = sorted(int(v) for v in lengths if int(v) > 0)
    if not values:
        raise ValueError("profile_shapes needs at least one positive length")
    if not 0 <= opt_percentile <= max_percentile <= 100:
        raise ValueError("need 0 <= opt_percentile <= max_percentile <= 100")

    def up(v: float) -> int:
        v = math.ceil(v - 1e-9)
        return int(math.ceil(v / round_to) * round_to) if round_to > 1 else int(v)

    lo = values[0]
    hi = up(_percentile(values, max_percentile))
    if max_cap is not None:
        hi = min(hi, int(max_cap))
    hi = max(hi, lo)
    opt = min(max(up(_percentile(values, opt_percentile)), lo), hi)
    return ShapeProfile(lo, opt, hi)


# ------------------------------------------------------------------ feeding


class CalibrationFeeder:
    """Hands out calibration batches one at a time, as named arrays of fixed shapes.

    ``batches`` are mappings ``input name -> np.ndarray``; ``shapes`` the shape
    each input must have (TensorRT calibrates at the profile's opt shape and reads
    exactly ``prod(shape)`` elements from the pointer it is given, so a wrong
    shape would be silently misread: it is rejected here instead). The TensorRT
    calibrator's ``get_batch(names)`` is ``next_batch(names)`` + a copy to device.
    """

    def __init__(
        self,
        batches: Sequence[Mapping[str, np.ndarray]],
        shapes: Mapping[str, Sequence[int]],
        dtypes: Mapping[str, np.dtype | type] | None = None,
    ) -> None:
        self.shapes = {k: tuple(int(d) for d in v) for k, v in shapes.items()}
        self.dtypes = {k: np.dtype(v) for k, v in (dtypes or {}).items()}
        self._batches: list[dict[str, np.ndarray]] = []
        for i, batch in enumerate(batches):
            checked = {}
            for name, shape in self.shapes.items():
                if name not in batch:
                    raise ValueError(f"calibration batch {i} lacks input {name!r}")
                arr = np.asarray(batch[name])
                if tuple(arr.shape) != shape:
                    raise ValueError(
                        f"calibration batch {i} input {name!r} has shape {tuple(arr.shape)}, expected {shape}"
                    )
                if name in self.dtypes:
                    arr = arr.astype(self.dtypes[name], copy=False)
                checked[name] = np.ascontiguousarray(arr)
            self._batches.append(checked)
        batch_dims = {s[0] for s in self.shapes.values() if s}
        self.batch_size = batch_dims.pop() if len(batch_dims) == 1 else 1
        self._next = 0

    def __len__(self) -> int:
        return len(self._batches)

    @property
    def consumed(self) -> int:
        return self._next

    def reset(self) -> None:
        self._next = 0

    def next_batch(self, names: Sequence[str] | None = None) -> list[np.ndarray] | None:
        """The next batch's arrays in ``names`` order, or None when exhausted."""
        if self._next >= len(self._batches):
            return None
        batch = self._batches[self._next]
        self._next += 1
        names = list(self.shapes) if names is None else list(names)
        unknown = [n for n in names if n not in batch]
        if unknown:
            raise KeyError(f"calibrator asked for unknown inputs {unknown}; known: {list(batch)}")
        return [batch[n] for n in names]


# ------------------------------------------------------------------ precision policy


#: name fragments of the parts that decide durations (coqui's and Piper's module names)
_DURATION_PARTS = ("text_encoder/", "duration_predictor/", "/enc_p/", "/dp/")
#: name fragments of the reverse flow and the HiFi-GAN decoder
_FLOW_DECODER_PARTS = ("/flow/", "flow/flows.", "/waveform_decoder/", "waveform_decoder/", "/dec/")


def layer_precision(name: str, last_stage_resblocks: Sequence[int] = (6, 7, 8), *, compute: bool = True) -> str:
    """The precision policy for one layer, from its ONNX/TensorRT name.

    ``compute``: the layer is a convolution / deconvolution / matrix multiply (the
    only layers INT8 speeds up). ``fp32``: the text encoder and duration predictor
    (they decide durations, hence the audio length) and any layer outside the flow
    and decoder, so an unmatched name defaults to the safe side. ``fp16``: decoder
    ``conv_post`` and the last upsampling stage's resblocks (they write the
    waveform; INT8 there raises the noise floor audibly in pauses), and the flow's /
    decoder's non-compute layers. ``int8``: the flow's and early decoder stages'
    compute layers.
    """
    if any(part in name for part in _DURATION_PARTS):
        return "fp32"
    if not any(part in name for part in _FLOW_DECODER_PARTS):
        return "fp32"
    if "conv_post" in name:
        return "fp16"
    for k in last_stage_resblocks:
        if f"resblocks.{k}/" in name:
            return "fp16"
    return "int8" if compute else "fp16"


def count_over_profile(frame_lengths: Sequence[int], profile: Any) -> int:
    """How many items (by latent frames) would not fit ``profile`` and run on torch instead."""
    return sum(1 for n in frame_lengths if int(n) > profile.frames.max)
