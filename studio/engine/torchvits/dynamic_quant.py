"""The ``dynamic-int8`` preset: ``torch.ao.quantization.quantize_dynamic``.

Dynamic quantization stores the weights of ``nn.Linear`` and of the recurrent
layers (``LSTM``/``GRU`` and their ``*Cell`` versions) as int8 and quantizes
activations on the fly, per batch. It needs no calibration data, runs on CPU
only (fbgemm / qnnpack kernels), and speeds up exactly those layers. It does
nothing to convolutions.

That makes it a good fit for autoregressive models built from LSTMs and linear
projections (Tacotron 2's decoder runs an attention LSTM, a decoder LSTM and
several linears once per frame: see ``bench/dynamic_quant_tacotron.py``) and a
no-op for VITS: a Piper/VITS voice is convolutions, attention done with 1x1
``Conv1d`` and a HiFi-GAN decoder. :func:`quantize_dynamic_model` counts layers
by walking the modules before and after, so the engine can say so honestly
instead of pretending to be INT8.
"""

from __future__ import annotations

import io
import logging
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from studio.core.errors import EngineError
from studio.engine.torchvits.engine import TorchVitsEngine

if TYPE_CHECKING:  # pragma: no cover
    pass

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class QuantReport:
    """What dynamic quantization found and did, counted by walking the modules.

    ``n_linear`` / ``n_lstm`` / ``n_gru``: float layers of exactly the types
    quantize_dynamic swaps (``n_lstm`` and ``n_gru`` include their ``*Cell``
    versions) before quantization. ``n_quantized``: dynamically quantized modules
    in the result. ``n_conv_untouched``: ``Conv1d/2d`` and ``ConvTranspose1d/2d``
    (including weight-norm parametrized ones) left in float.
    ``n_linear_like_skipped``: subclasses of ``nn.Linear`` that quantize_dynamic
    does not swap (it matches exact types, e.g. attention ``out_proj``).
    """

    n_linear: int
    n_lstm: int
    n_gru: int
    n_quantized: int
    n_conv_untouched: int
    n_linear_like_skipped: int = 0
    n_cells: int = 0
    size_fp32_bytes: int | None = None
    size_quantized_bytes: int | None = None

    @property
    def n_candidates(self) -> int:
        return self.n_linear + self.n_lstm + self.n_gru

    @property
    def effective(self) -> bool:
        return self.n_quantized > 0

    def summary(self) -> str:
        text = (
            f"quantized {self.n_quantized} of {self.n_candidates} Linear/LSTM/GRU layers "
            f"({self.n_linear} Linear, {self.n_lstm} LSTM, {self.n_gru} GRU); "
            f"{self.n_conv_untouched} conv layers stay FP32"
        )
        if self.size_fp32_bytes and self.size_quantized_bytes:
            text += (
                f"; size {self.size_fp32_bytes / 2**20:.1f} -> {self.size_quantized_bytes / 2**20:.1f} MiB"
            )
        return text


def _quantizable_types() -> dict[type, str]:
    import torch.nn as nn

    return {
        nn.Linear: "linear",
        nn.LSTM: "lstm",
        nn.LSTMCell: "lstm",
        nn.GRU: "gru",
        nn.GRUCell: "gru",
    }


def _dynamic_quantized_types() -> tuple[type, ...]:
    from torch.ao.nn.quantized import dynamic as nnqd

    names = ("Linear", "LSTM", "GRU", "LSTMCell", "GRUCell", "RNNCell")
    return tuple(getattr(nnqd, n) for n in names if hasattr(nnqd, n))


def _is_conv(module) -> bool:
    import torch.nn as nn

    return isinstance(module, (nn.Conv1d, nn.Conv2d, nn.ConvTranspose1d, nn.ConvTranspose2d))


def count_layers(model) -> dict[str, int]:
    """Module walk: exact-type Linear / LSTM(+Cell) / GRU(+Cell), conv, dynamic-quantized."""
    import torch.nn as nn

    from torch.nn.utils import parametrize

    types = _quantizable_types()
    qtypes = _dynamic_quantized_types()
    counts = {"linear": 0, "lstm": 0, "gru": 0, "cells": 0, "conv": 0, "quantized": 0, "linear_like": 0}
    for module in model.modules():
        # weight-norm etc. make a dynamic subclass; look through it like quantize_dynamic does
        kind = parametrize.type_before_parametrizations(module)
        if isinstance(module, qtypes):
            counts["quantized"] += 1
        elif kind in types:
            counts[types[kind]] += 1
            if kind in (nn.LSTMCell, nn.GRUCell):
                counts["cells"] += 1
        elif isinstance(module, nn.Linear):
            counts["linear_like"] += 1
        elif _is_conv(module):
            counts["conv"] += 1
    return counts


def serialized_size(model) -> int:
    """Bytes of ``torch.save(model.state_dict())`` (packed int8 weights included)."""
    import torch

    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.tell()


def quantize_dynamic_model(
    model, *, inplace: bool = False, measure_size: bool = False
) -> tuple[Any, QuantReport]:
    """``quantize_dynamic`` on Linear/LSTM/GRU (+cells) with int8 weights, and what it did.

    The model must be on CPU in float32 (dynamic quantization has no CUDA kernels).
    ``inplace=False`` leaves ``model`` untouched and returns a quantized deep copy.
    """
    import torch

    param = next(model.parameters(), None)
    if param is not None and (param.device.type != "cpu" or param.dtype != torch.float32):
        raise EngineError(
            f"dynamic int8 quantization runs on CPU float32 models; this one is {param.device}/{param.dtype}"
        )
    before = count_layers(model)
    size_before = serialized_size(model) if measure_size else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.ao -> torchao migration notice
        qmodel = torch.ao.quantization.quantize_dynamic(
            model, set(_quantizable_types()), dtype=torch.qint8, inplace=inplace
        )
    after = count_layers(qmodel)
    report = QuantReport(
        n_linear=before["linear"],
        n_lstm=before["lstm"],
        n_gru=before["gru"],
        n_quantized=after["quantized"] - before["quantized"],
        n_conv_untouched=after["conv"],
        n_linear_like_skipped=after["linear_like"],
        n_cells=before["cells"],
        size_fp32_bytes=size_before,
        size_quantized_bytes=serialized_size(qmodel) if measure_size else None,
    )
    _LOGGER.info("dynamic quantization: %s", report.summary())
    return qmodel, report


class DynamicQuantTorchEngine(TorchVitsEngine):
    """The torch VITS engine with ``quantize_dynamic`` applied to its model at load.

    CPU only. On a Piper/VITS voice there is nothing to quantize (no Linear,
    LSTM or GRU layer), so this runs as FP32 and :meth:`describe` says so; the
    report is counted, not assumed, so a voice that does contain such layers is
    quantized and reported as such.
    """

    name = "torch-dynamic-int8"

    def __init__(self, voice, device: str = "cpu", dtype=None, *, threads: int | None = None) -> None:
        if str(device) != "cpu":
            raise EngineError(f"dynamic int8 quantization runs on CPU only (asked for {device!r})")
        if dtype is not None and str(dtype).removeprefix("torch.") not in ("float32", "fp32"):
            raise EngineError("dynamic int8 quantization starts from a float32 model")
        super().__init__(voice, "cpu", None, threads=threads)
        self.quant_report: QuantReport | None = None

    def load(self) -> None:
        if self.quant_report is not None and self._model is not None:
            return
        super().load()
        with self._lock:
            if self.quant_report is None or self._model is None:
                qmodel, report = quantize_dynamic_model(self._model, inplace=True)
                self._model = qmodel.eval()
                self.quant_report = report

    def close(self) -> None:
        super().close()
        self.quant_report = None

    def describe(self) -> str:
        self.load()
        report = self.quant_report
        assert report is not None
        if report.n_quantized == 0:
            return (
                f"dynamic-int8 on torch CPU: quantized 0 of {report.n_candidates} Linear/LSTM/GRU "
                f"layers — this VITS voice is all convolutions ({report.n_conv_untouched} Conv1d/"
                "ConvTranspose1d, attention included), so this preset runs as FP32"
            )
        return f"dynamic-int8 on torch CPU: {report.summary()}"


__all__ = [
    "QuantReport",
    "count_layers",
    "serialized_size",
    "quantize_dynamic_model",
    "DynamicQuantTorchEngine",
]
