"""The ``piper`` command-line row: the baseline every studio preset is compared with.

Kept apart from the preset measurements because it measures something else: a
separate ``piper`` process (its own start-up, model load and ONNX Runtime threads),
timed from outside by wall clock and ``RUSAGE_CHILDREN``. Run once on the whole
text and once on one word, the difference is its steady throughput without
start-up (:func:`piper_rows`) -- the figure the ratios use.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path
from typing import Any, Sequence

from studio.measure.machine import LoadMonitor
from studio.core.errors import StudioError
from studio.core.system import children_cpu_seconds

__all__ = ["piper_command", "run_piper_cli", "piper_rows"]


def piper_command() -> list[str]:
    exe = Path(sys.executable).parent / "piper"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("piper")
    return [found] if found else [sys.executable, "-m", "piper"]


def run_piper_cli(
    model: Path, config: Path, sentences: Sequence[str], *, length_scale: float, monitor: LoadMonitor | None = None
) -> dict[str, Any]:
    """One ``piper`` process on the sentences (one per line on stdin) -> wall s, CPU s, audio s, peak RSS."""
    with tempfile.TemporaryDirectory(prefix="studio-bench-piper-") as tmp:
        out = Path(tmp) / "out.wav"
        cmd = piper_command() + [
            "-m", str(model), "-c", str(config), "-f", str(out),
            "--noise-scale", "0", "--noise-w-scale", "0", "--length-scale", f"{length_scale:g}",
        ]
        text = ("\n".join(sentences) + "\n").encode()
        t0, c0 = time.perf_counter(), children_cpu_seconds()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if monitor is not None:
            monitor.add(proc.pid)
        peak = None
        try:
            _, err = proc.communicate(text, timeout=1800)
        finally:
            if monitor is not None:
                peak = monitor.remove(proc.pid) or None
        c1 = children_cpu_seconds()
        wall, cpu = time.perf_counter() - t0, (c1 - c0 if c1 is not None and c0 is not None else float("nan"))
        if proc.returncode != 0:
            tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
            raise StudioError(f"piper CLI failed (exit {proc.returncode}): {tail[0]}")
        with wave.open(str(out), "rb") as wav:
            audio_s = wav.getnframes() / wav.getframerate()
    shown = [Path(cmd[0]).name] + cmd[1:]
    shown[shown.index("-m") + 1] = model.name
    shown[shown.index("-c") + 1] = config.name
    shown[shown.index("-f") + 1] = "out.wav"
    return {
        "command": " ".join(shown),
        "seconds": wall,
        "cpu_seconds": cpu,
        "audio_seconds": audio_s,
        "sentences": len(sentences),
        "rss_peak_bytes": peak,
    }


def piper_rows(runs: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """piper CLI rows from (start-up run, whole-text run) pairs: medians over the rounds."""
    med = statistics.median
    startup_s = med([s["seconds"] for s, _ in runs])
    total_s = med([t["seconds"] for _, t in runs])
    steadies = [max(1e-3, t["seconds"] - s["seconds"]) for s, t in runs]
    steady_s = med(steadies)
    total_cpu = med([t["cpu_seconds"] for _, t in runs])
    steady_cpu = med([max(1e-3, t["cpu_seconds"] - s["cpu_seconds"]) for s, t in runs])
    first = runs[0][1]
    audio, n = first["audio_seconds"], first["sentences"]
    rss = max((t.get("rss_peak_bytes") or 0) for _, t in runs) or None
    return {
        "command": first["command"],
        "rounds": len(runs),
        "startup_s": startup_s,
        "round_seconds": [t["seconds"] for _, t in runs],
        "total": {
            "seconds": total_s, "audio_seconds": audio, "sentences": n,
            "x_real_time": audio / total_s, "rtf": total_s / audio, "sentences_per_s": n / total_s,
            "cpu_seconds": total_cpu, "audio_per_cpu_s": audio / total_cpu if total_cpu else None,
            "rss_peak_bytes": rss,
        },
        "steady": {
            "seconds": steady_s, "audio_seconds": audio, "sentences": n,
            "x_real_time": audio / steady_s, "rtf": steady_s / audio, "sentences_per_s": n / steady_s,
            "best_x_real_time": audio / min(steadies), "cpu_seconds": steady_cpu, "audio_per_cpu_s": audio / steady_cpu, "rss_peak_bytes": rss,
        },
    }
