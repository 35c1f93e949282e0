"""What differs between Linux, macOS and Windows, in one place.

Why one module: the studio runs the same on the three systems, and every call that
exists on only some of them (``fcntl``, ``resource``, process groups, ``/proc``) lives
here behind a function that does the nearest thing elsewhere. ``tests/house`` fails on
such a call anywhere else in ``studio/``, so a Linux-only habit cannot creep back in.
psutil answers what it already knows on every system (process trees, CPU times).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Iterator

WINDOWS = sys.platform == "win32"
MACOS = sys.platform == "darwin"
LINUX = sys.platform.startswith("linux")


# ------------------------------------------------------------------ file locks


def _lock(fh: IO[Any], *, wait: bool) -> None:
    """Take an exclusive lock on the open file ``fh``; OSError when ``wait`` is False and it is held."""
    if WINDOWS:
        import msvcrt

        fh.seek(0)
        while True:  # msvcrt's own blocking mode gives up after 10 s
            try:
                msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
                return
            except OSError:
                if not wait:
                    raise
                time.sleep(0.05)
    import fcntl

    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))


def _unlock(fh: IO[Any]) -> None:
    if WINDOWS:
        import msvcrt

        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def locked_file(path: str | Path, *, wait: bool = True) -> Iterator[IO[str]]:
    """``path`` opened for appending and locked for this process alone while the block runs.

    ``wait=False`` raises :class:`OSError` at once when another process holds it. The
    operating system drops the lock when its holder dies (flock on POSIX, LockFileEx
    on Windows), so a killed process never blocks the next one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8", newline="\n") as fh:
        _lock(fh, wait=wait)
        try:
            yield fh
        finally:
            _unlock(fh)


# ------------------------------------------------------------------ processes


def new_process_group() -> dict[str, Any]:
    """``subprocess.Popen`` keywords that start a command in a group of its own, so that
    :func:`kill_process_group` ends it and everything it started."""
    if WINDOWS:
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def kill_process_group(proc: subprocess.Popen[Any], *, polite: bool = False) -> None:
    """End the group :func:`new_process_group` started: SIGTERM (``polite``) or SIGKILL to
    the whole group on POSIX; on Windows the process tree, found through psutil."""
    if not WINDOWS:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM if polite else signal.SIGKILL)
        return
    import psutil

    try:
        root = psutil.Process(proc.pid)
        tree = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for p in tree:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            p.terminate() if polite else p.kill()


def no_core_dumps() -> None:
    """Stop this process from writing a core file when it crashes (a model process that
    dies on purpose in a test would leave hundreds of MB). Nothing to do on Windows."""
    try:
        import resource
    except ImportError:
        return
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def crash_now() -> None:
    """End this process the way a native crash does (the tests' stand-in for a segfault)."""
    os.kill(os.getpid(), signal.SIGSEGV)


def children_cpu_seconds() -> float | None:
    """CPU seconds (user + system) of this process's waited-for children; None where the
    system does not keep the sum (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def peak_rss_bytes() -> int | None:
    """This process's largest resident set so far, where the system keeps it."""
    if WINDOWS:
        import psutil

        return int(getattr(psutil.Process().memory_info(), "peak_wset", 0)) or None
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if MACOS else peak * 1024)  # macOS counts bytes, Linux KiB


def machine_busy_seconds() -> float | None:
    """CPU seconds the whole machine has been busy since boot (all CPUs, every process)."""
    try:
        import psutil

        times = psutil.cpu_times()
    except (ImportError, OSError):
        return None
    idle = times.idle + getattr(times, "iowait", 0.0)
    return max(0.0, sum(times) - idle - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0))


def load_average() -> tuple[float, float, float]:
    """The 1-, 5- and 15-minute load averages (psutil keeps a running estimate on Windows)."""
    if hasattr(os, "getloadavg"):
        return os.getloadavg()
    import psutil

    return psutil.getloadavg()


@functools.lru_cache(maxsize=1)
def umask() -> int:
    """The file-creation mask new files get (0o022 where there is none: Windows); read once."""
    if WINDOWS:
        return 0o022
    if LINUX:  # read without setting it: os.umask is process-wide, and threads write files
        with contextlib.suppress(OSError, ValueError):
            for line in Path("/proc/self/status").read_text(encoding="ascii", errors="replace").splitlines():
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    current = os.umask(0o022)
    os.umask(current)
    return current


# ------------------------------------------------------------------ the CPU


def cpu_model() -> str:
    """The CPU's marketing name (``AMD EPYC 7B13``), or the architecture where unknown."""
    import platform

    if LINUX:
        with contextlib.suppress(OSError):
            for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    if MACOS:
        name = _sysctl("machdep.cpu.brand_string")
        if name:
            return name
    return platform.processor() or platform.machine()


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags in Linux's spelling (``avx2``, ``avx512_bf16``); empty where unknown.

    Linux: the kernel's list (what the CPU and the hypervisor really offer). macOS on
    Intel: sysctl's lists, lower-cased (``AVX512BF16`` is not mapped; Apple never
    shipped it). Windows: unknown here, so nothing is promised (the BF16 preset is then
    advised against, as on a CPU without it).
    """
    if LINUX:
        try:
            text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return frozenset()
        for line in text.splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("flags", "Features"):
                return frozenset(value.split())
        return frozenset()
    if MACOS:
        words = f"{_sysctl('machdep.cpu.features')} {_sysctl('machdep.cpu.leaf7_features')}".lower().split()
        return frozenset(w.replace(".", "_") for w in words)
    return frozenset()


def _sysctl(name: str) -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5).stdout.strip()
    return ""


__all__ = [
    "LINUX", "MACOS", "WINDOWS", "children_cpu_seconds", "cpu_flags", "cpu_model", "crash_now",
    "kill_process_group", "load_average", "locked_file", "machine_busy_seconds", "new_process_group", "no_core_dumps",
    "peak_rss_bytes", "umask",
]
