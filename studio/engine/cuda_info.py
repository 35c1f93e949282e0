"""GPU memory facts and the one policy for giving CUDA memory back.

Two views of VRAM, because they answer different questions:

* the **torch caching allocator** (``torch.cuda.memory_allocated`` /
  ``max_memory_allocated`` / ``memory_reserved``): what *this process's* torch
  tensors use, what they peaked at, and what the allocator holds on to. This is
  what batch-size decisions need (the peak of one batch).
* **NVML** (``pynvml``, shipped as ``nvidia-ml-py``), when importable: what the
  *device* has in use in total, including the CUDA context, cuDNN/cuBLAS
  workspaces, TensorRT engines and other processes. This is what a user sees in
  ``nvidia-smi``.

On a machine without CUDA (or without torch) every number is ``None``; callers
print "n/a" rather than guessing.

Cache release policy
--------------------
``torch.cuda.empty_cache()`` returns cached-but-unused blocks to the driver. It
does not free live tensors, it is slow-ish (a device sync), and the next batch
would just have to re-allocate the same blocks through ``cudaMalloc``, which is
much slower than a cache hit. So the studio calls :func:`release_cuda_cache`:

* when an engine **closes** (``Engine.close()`` of the torch / fp16 / TensorRT
  engines), so that switching presets or voices does not keep the old model's
  blocks reserved;
* when a render **child process is recycled** (right before it exits, and the
  exit itself returns everything to the driver);
* after an **out-of-memory** error, before retrying with a smaller batch.

Never per batch or per sentence: the allocator's cache is what makes repeated
batches of similar shape cheap. Peak statistics are reset with
:func:`reset_peak` at the start of a measurement, not implicitly.
"""

from __future__ import annotations

import gc
import logging
from dataclasses import asdict, dataclass

_LOGGER = logging.getLogger(__name__)

MiB = 1024 * 1024


@dataclass(frozen=True)
class VramStats:
    """Bytes, or None where the fact is unknown on this machine."""

    device_name: str | None = None
    allocated: int | None = None
    """torch: bytes held by live tensors now."""
    peak_allocated: int | None = None
    """torch: max of ``allocated`` since the last :func:`reset_peak`."""
    reserved: int | None = None
    """torch: bytes the caching allocator holds (live + cached)."""
    peak_reserved: int | None = None
    nvml_used: int | None = None
    """NVML: device memory in use by everyone (context, other processes, TensorRT...)."""
    nvml_total: int | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        """One line in MiB, ``n/a`` for unknown fields."""

        def mib(v: int | None) -> str:
            return "n/a" if v is None else f"{v / MiB:.0f} MiB"

        if self.device_name is None and self.nvml_used is None:
            return "no CUDA device"
        return (
            f"{self.device_name}: allocated {mib(self.allocated)}, peak {mib(self.peak_allocated)}, "
            f"reserved {mib(self.reserved)}, device used {mib(self.nvml_used)} of {mib(self.nvml_total)}"
        )


def _torch_cuda():
    """The ``torch.cuda`` module when a CUDA device is usable, else None."""
    try:
        import torch
    except ImportError:
        return None
    try:
        return torch.cuda if torch.cuda.is_available() else None
    except Exception:  # pragma: no cover - broken driver installs raise here
        return None


def _device_index(device) -> int:
    if device is None:
        cuda = _torch_cuda()
        return cuda.current_device() if cuda is not None else 0
    if isinstance(device, int):
        return device
    text = str(device)
    if ":" in text:
        return int(text.split(":", 1)[1])
    return 0


def nvml_memory(index: int = 0) -> tuple[int, int] | None:
    """``(used, total)`` bytes from NVML, or None when pynvml/driver are absent."""
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        try:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            info = pynvml.nvmlDeviceGetMemoryInfo(handle)
            return int(info.used), int(info.total)
        finally:
            pynvml.nvmlShutdown()
    except Exception as exc:  # pynvml.NVMLError and friends: no driver, no device
        _LOGGER.debug("NVML unavailable: %s", exc)
        return None


def vram_stats(device=None) -> VramStats:
    """Current and peak VRAM of ``device`` (index, ``"cuda:1"`` or None = current)."""
    cuda = _torch_cuda()
    index = _device_index(device)
    nvml = nvml_memory(index)
    if cuda is None:
        if nvml is None:
            return VramStats()
        return VramStats(nvml_used=nvml[0], nvml_total=nvml[1])
    return VramStats(
        device_name=cuda.get_device_name(index),
        allocated=int(cuda.memory_allocated(index)),
        peak_allocated=int(cuda.max_memory_allocated(index)),
        reserved=int(cuda.memory_reserved(index)),
        peak_reserved=int(cuda.max_memory_reserved(index)),
        nvml_used=None if nvml is None else nvml[0],
        nvml_total=None if nvml is None else nvml[1],
    )


def reset_peak(device=None) -> None:
    """Start a new peak measurement (no-op without CUDA)."""
    cuda = _torch_cuda()
    if cuda is not None:
        cuda.reset_peak_memory_stats(_device_index(device))


def gpu_name(device=None) -> str | None:
    """The CUDA device's name (e.g. ``NVIDIA H200``), None without CUDA."""
    cuda = _torch_cuda()
    return None if cuda is None else cuda.get_device_name(_device_index(device))


def release_cuda_cache(reason: str = "") -> bool:
    """Return the allocator's cached blocks to the driver (see the module policy).

    Call on engine close, child recycle and after OOM; never per batch. Returns
    True when there was a CUDA device to release.
    """
    cuda = _torch_cuda()
    if cuda is None:
        return False
    gc.collect()  # drop unreachable tensors first, or their blocks stay allocated
    cuda.synchronize()
    before = cuda.memory_reserved()
    cuda.empty_cache()
    _LOGGER.debug(
        "released CUDA cache%s: reserved %.0f -> %.0f MiB",
        f" ({reason})" if reason else "",
        before / MiB,
        cuda.memory_reserved() / MiB,
    )
    return True
