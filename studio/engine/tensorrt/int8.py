"""INT8 for TensorRT: the implicit calibrator (TensorRT <= 10) and explicit Q/DQ (>= 11).

Both are fed by the same :class:`~studio.engine.tensorrt.profile.CalibrationFeeder`
batches (the profile's opt shape), so the two TensorRT generations calibrate on the
same data. :func:`feed_device_buffers` is the calibrator's ``get_batch`` minus
TensorRT, so it is tested on CPU. ``tensorrt``, ``torch``, ``onnx`` and
``onnxruntime`` are passed in or imported lazily.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from studio.engine.tensorrt.cache import ids_digest
from studio.engine.tensorrt.profile import CalibrationFeeder, layer_precision


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


def make_calibrator(trt, torch, feeder: CalibrationFeeder, cache_file: Path | None, device: str = "cuda"):
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
        # running min/max: the entropy calibrator keeps every batch's activations in RAM
        calibrate_method=CalibrationMethod.MinMax,
        # QuantizeBias False: TensorRT's parser rejects INT32 bias dequantize nodes
        extra_options={"ActivationSymmetric": True, "WeightSymmetric": True, "QuantizeBias": False,
                       "CalibMovingAverage": True},
    )
    return out


__all__ = ["feed_device_buffers", "make_calibrator", "qdq_model"]
