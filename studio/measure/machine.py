"""The machine a ``studio bench`` run measured, and the sampler that watches it meanwhile.

Separate from the orchestration (:mod:`studio.measure.runner`) because both the
parent's rows and the piper CLI row (:mod:`studio.measure.piper_cli`) need the
same peak-RSS sampling, and the machine description is what makes two
``bench.json`` files comparable at all.
"""

from __future__ import annotations

import os
import platform
import threading
import time
from typing import Any

from studio.core.system import cpu_model, load_average
from studio.engine.cpu_features import notable_flags

__all__ = ["machine_info", "describe_machine", "LoadMonitor", "tree_rss"]


def machine_info() -> dict[str, Any]:
    """CPU, cores, memory, OS, library versions, GPU (when torch sees one)."""
    import onnxruntime

    try:
        import psutil

        physical = psutil.cpu_count(logical=False)
        memory = psutil.virtual_memory().total
    except Exception:  # noqa: BLE001
        physical, memory = None, None
    info: dict[str, Any] = {
        "cpu": cpu_model(),
        "physical_cores": physical,
        "logical_cpus": os.cpu_count(),
        "memory_bytes": memory,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "onnxruntime": onnxruntime.__version__,
        "gpu": None,
        "cpu_flags": notable_flags(),
    }
    try:
        import torch

        info["torch"] = torch.__version__
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001 - torch is optional
        info["torch"] = None
    return info


def describe_machine(info: dict[str, Any]) -> str:
    mem = f", {info['memory_bytes'] / 2**30:.0f} GiB RAM" if info.get("memory_bytes") else ""
    gpu = f", GPU {info['gpu']}" if info.get("gpu") else ", no CUDA GPU"
    return (
        f"{info['cpu']}, {info.get('physical_cores') or '?'} physical cores / {info['logical_cpus']} logical CPUs"
        f"{mem}{gpu}; {info['os']}, Python {info['python']}, ONNX Runtime {info['onnxruntime']}"
        + (f", torch {info['torch']}" if info.get("torch") else "")
        + (f"; CPU flags: {' '.join(info['cpu_flags'])}" if info.get("cpu_flags") else "")
    )


class LoadMonitor:
    """Samples the 1-minute load average and the peak RSS of the process trees it is given."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.loads: list[float] = []
        self._peaks: dict[int, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="studio-bench-monitor", daemon=True)
        self._last_load = 0.0

    def start(self) -> "LoadMonitor":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)

    def add(self, pid: int) -> None:
        with self._lock:
            self._peaks.setdefault(pid, 0)

    def remove(self, pid: int) -> int:
        with self._lock:
            return self._peaks.pop(pid, 0)

    def peak(self, pid: int) -> int:
        with self._lock:
            return self._peaks.get(pid, 0)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            now = time.monotonic()
            if now - self._last_load >= 1.0:
                self._last_load = now
                self.loads.append(load_average()[0])
            with self._lock:
                pids = list(self._peaks)
            for pid in pids:
                try:
                    rss = tree_rss(pid)
                except Exception:  # noqa: BLE001 - gone between two samples
                    continue
                with self._lock:
                    if pid in self._peaks:
                        self._peaks[pid] = max(self._peaks[pid], rss)


def tree_rss(pid: int | None = None) -> int:
    """RSS of a process and all its children (bytes)."""
    import psutil

    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            pass
    return total
