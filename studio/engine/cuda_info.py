"""GPU memory facts and the one policy for giving CUDA memory back.

Three views of VRAM, because they answer different questions:

* the **device** (``torch.cuda.mem_get_info``, i.e. ``cudaMemGetInfo``; NVML when
  torch cannot say): bytes in use on the GPU by everything -- the CUDA context,
  torch's cache, cuDNN/cuBLAS workspaces, TensorRT engines and their activation
  memory (which TensorRT allocates itself, invisible to torch's allocator) and
  other processes. This is the one measure every preset shares, so the desktop
  readout and the GPU check use it (:func:`device_memory`, :class:`DevicePeakMeter`).

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
    device_used: int | None = None
    """Device level (``mem_get_info``, else NVML): what the GPU has in use, TensorRT included."""
    device_total: int | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        """One line in MiB, ``n/a`` for unknown fields."""

        def mib(v: int | None) -> str:
            return "n/a" if v is None else f"{v / MiB:.0f} MiB"

        if self.device_name is None and self.device_used is None:
            return "no CUDA device"
        return (
            f"{self.device_name}: allocated {mib(self.allocated)}, peak {mib(self.peak_allocated)}, "
            f"reserved {mib(self.reserved)}, device used {mib(self.device_used)} of {mib(self.device_total)}"
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


def device_memory(device=None) -> tuple[int, int] | None:
    """``(used, total)`` bytes of the whole device, or None without a CUDA device.

    ``torch.cuda.mem_get_info`` first (no extra library, and it is what the CUDA
    driver itself reports), NVML second. Either counts memory torch's allocator does
    not know about (TensorRT's engines and activations, the CUDA context).
    """
    cuda = _torch_cuda()
    index = _device_index(device)
    if cuda is not None:
        try:
            free, total = cuda.mem_get_info(index)
            return int(total) - int(free), int(total)
        except Exception as exc:  # pragma: no cover - broken driver
            _LOGGER.debug("mem_get_info failed: %s", exc)
    return nvml_memory(index)


class DevicePeakMeter:
    """Highest device-level use while a block runs, sampled from a background thread.

    Why sampling: the device has no peak counter (torch's ``max_memory_reserved``
    sees only torch's own allocations), and a batch's activations live only while
    it runs. A thread reads :func:`device_memory` every ``interval_s`` (cheap: no
    synchronisation) and keeps the maximum; the reading before and after is
    included, so a block shorter than the interval is still measured at its ends.
    ``peak`` / ``start`` are None without a CUDA device.
    """

    def __init__(self, device=None, interval_s: float = 0.002) -> None:
        self.device = device
        self.interval_s = interval_s
        self.start: int | None = None
        self.peak: int | None = None
        self._stop = None
        self._thread = None

    def _sample(self) -> None:
        now = device_memory(self.device)
        if now is not None and (self.peak is None or now[0] > self.peak):
            self.peak = now[0]

    def __enter__(self) -> "DevicePeakMeter":
        import threading

        first = device_memory(self.device)
        self.start = None if first is None else first[0]
        self.peak = self.start
        if first is not None:
            self._stop = threading.Event()

            def loop() -> None:
                while not self._stop.wait(self.interval_s):
                    self._sample()

            self._thread = threading.Thread(target=loop, name="device-peak-meter", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        self._sample()

    @property
    def rise(self) -> int | None:
        """Peak minus the reading at the start: what the block added at its highest."""
        return None if self.peak is None or self.start is None else self.peak - self.start


def vram_stats(device=None) -> VramStats:
    """Current and peak VRAM of ``device`` (index, ``"cuda:1"`` or None = current)."""
    cuda = _torch_cuda()
    index = _device_index(device)
    nvml = nvml_memory(index)
    dev = device_memory(index) if cuda is not None else nvml
    if cuda is None:
        if nvml is None:
            return VramStats()
        return VramStats(nvml_used=nvml[0], nvml_total=nvml[1], device_used=nvml[0], device_total=nvml[1])
    return VramStats(
        device_used=None if dev is None else dev[0],
        device_total=None if dev is None else dev[1],
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
