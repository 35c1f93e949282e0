"""Running a serialized TensorRT engine with torch CUDA tensors as its buffers.

torch already owns the GPU memory and streams of the rest of the pipeline (the
text encoder of the ``flow_decoder`` variant runs in torch), so the engine reads
and writes torch tensors directly (``set_tensor_address`` + ``execute_async_v3``
on a torch stream) instead of going through a second allocator such as pycuda.
The full graph's audio length is data dependent; its output goes through an
``IOutputAllocator`` that allocates torch tensors too.

``tensorrt`` and ``torch`` are passed in or imported lazily: importing this module
needs neither.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from studio.core.errors import EngineError, PresetUnavailable

if TYPE_CHECKING:  # pragma: no cover
    import torch

#: how to get the supported TensorRT (10.x); 11.x removed implicit INT8 and FP16 flags
INSTALL_HINT = "pip install --extra-index-url https://pypi.nvidia.com 'audiobook-studio[tensorrt]' for TensorRT 10.x"


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
        raise PresetUnavailable(f"TensorRT is not installed ({INSTALL_HINT}): {exc}") from exc
    return trt, torch


def gpu_token(torch, device: str | None = None) -> str:
    """The GPU as it enters the cache key: kernels are tuned per model and compute capability."""
    index = torch.device(device).index if device and ":" in str(device) else torch.cuda.current_device()
    major, minor = torch.cuda.get_device_capability(index)
    return f"{torch.cuda.get_device_name(index)} sm_{major}{minor}"


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


def _make_output_allocator(trt, torch, device: str = "cuda"):
    """An ``IOutputAllocator`` handing TensorRT torch CUDA memory (on ``device``) for data-dependent outputs."""

    class TorchOutputAllocator(trt.IOutputAllocator):
        def __init__(self) -> None:
            trt.IOutputAllocator.__init__(self)
            self.buffers: dict[str, Any] = {}
            self.shapes: dict[str, tuple[int, ...]] = {}

        def _alloc(self, name: str, size: int) -> int:
            buf = self.buffers.get(name)
            if buf is None or buf.numel() < size:
                buf = torch.empty(max(int(size), 1), dtype=torch.uint8, device=device)
                self.buffers[name] = buf
            return int(buf.data_ptr())

        def reallocate_output(self, tensor_name, memory, size, alignment):  # TRT 8.6 - 10
            return self._alloc(tensor_name, size)

        def reallocate_output_async(self, tensor_name, memory, size, alignment, stream=None):  # TRT >= 10
            return self._alloc(tensor_name, size)

        def notify_shape(self, tensor_name, shape) -> None:
            self.shapes[tensor_name] = tuple(int(d) for d in shape)

    return TorchOutputAllocator()


class TrtRunner:
    """A deserialized engine + execution context driven with torch CUDA tensors on ``device``.

    ``activation_bytes``: the device memory TensorRT reserved for the context's
    activations (allocated by TensorRT itself, so torch's allocator never sees it;
    the device-level readout of :mod:`studio.engine.cuda_info` does).
    """

    def __init__(self, trt, torch, plan: bytes, logger, device: str = "cuda") -> None:
        self.trt, self.torch = trt, torch
        self.device = torch.device(device)
        self.runtime = trt.Runtime(logger)
        with torch.cuda.device(self.device):
            self.engine = self.runtime.deserialize_cuda_engine(plan)
            if self.engine is None:
                raise EngineError("TensorRT could not deserialize the cached engine (stale cache?)")
            self.context = self.engine.create_execution_context()
        size = getattr(self.engine, "device_memory_size_v2", None)
        self.activation_bytes = int(size if size is not None else getattr(self.engine, "device_memory_size", 0))
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        for i in range(self.engine.num_io_tensors):
            name = self.engine.get_tensor_name(i)
            mode = self.engine.get_tensor_mode(name)
            (self.inputs if mode == trt.TensorIOMode.INPUT else self.outputs).append(name)
        self.stream = torch.cuda.Stream(device=self.device)
        self.allocator = _make_output_allocator(trt, torch, str(self.device))
        self._lock = threading.Lock()

    def dtype(self, name: str):
        return _torch_dtype(self.trt, self.torch, self.engine.get_tensor_dtype(name))

    def __call__(self, feeds: Mapping[str, "torch.Tensor"]) -> dict[str, "torch.Tensor"]:
        torch = self.torch
        # inputs were produced on the caller's stream: order our stream after it
        self.stream.wait_stream(torch.cuda.current_stream(self.device))
        with self._lock, torch.cuda.device(self.device), torch.cuda.stream(self.stream):
            keep = []
            for name in self.inputs:
                t = feeds[name].to(device=self.device, dtype=self.dtype(name)).contiguous()
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
                    out = torch.empty(shape, dtype=self.dtype(name), device=self.device)
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


__all__ = [
    "INSTALL_HINT",
    "TrtRunner",
    "gpu_token",
    "require_tensorrt_and_cuda",
    "tensorrt_version",
]
