"""Generated speech-like signals and ffmpeg's own measurements, for the publishing tests (no tests in here)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np

from studio.audio.measure import measure_file
from studio.audio.tags import BookMeta

SR = 44100


def speechlike(seconds: float = 12.0, level: float = 0.3, seed: int = 3, sr: int = SR) -> np.ndarray:
    """Bursts of harmonic "vowels" with noisy onsets, separated by pauses, over a faint floor."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    gate = (np.sin(2 * np.pi * 0.6 * t) > 0.1).astype(np.float64)
    pitch = 140 + 30 * np.sin(2 * np.pi * 0.3 * t)
    phase = 2 * np.pi * np.cumsum(pitch) / sr
    voice = sum(np.sin(k * phase) / k for k in range(1, 6)) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t) ** 2)
    x = level * gate * (voice + 0.2 * rng.standard_normal(t.size)) + 10 ** (-72 / 20) * rng.standard_normal(t.size)
    return x.astype(np.float32)


def ffmpeg_stats(path: Path) -> dict[str, float]:
    """RMS, sample peak, RMS trough (astats) and integrated loudness, true peak (ebur128)."""
    proc = subprocess.run(
        ["ffmpeg", "-hide_banner", "-nostats", "-i", str(path), "-af",
         "astats=measure_perchannel=none,ebur128=peak=true", "-f", "null", "-"],
        capture_output=True, text=True, check=True,
    )
    err = proc.stderr

    def grab(pattern: str) -> float:
        found = re.findall(pattern, err)
        assert found, f"{pattern!r} not in ffmpeg's output"
        return float(found[-1])

    summary = err[err.rindex("Summary:"):]
    return {
        "rms": grab(r"RMS level dB: (-?[\d.]+)"),
        "peak": grab(r"Peak level dB: (-?[\d.]+)"),
        "trough": grab(r"RMS trough dB: (-?[\d.]+)"),
        "lufs": float(re.search(r"I:\s+(-?[\d.]+) LUFS", summary).group(1)),
        "true_peak": float(re.search(r"True peak:\s+Peak:\s+(-?[\d.]+)", summary).group(1)),
    }


def agree_with_ffmpeg(path: Path) -> None:
    ours, theirs = measure_file(path), ffmpeg_stats(path)
    assert abs(ours.rms_db - theirs["rms"]) < 0.5
    assert abs(ours.peak_db - theirs["peak"]) < 0.5
    assert abs(ours.true_peak_db - theirs["true_peak"]) < 0.5
    assert abs(ours.lufs - theirs["lufs"]) < 0.5
    if ours.head_s < 0.05:  # starts loud: astats' trough detector settles where ours does
        assert abs(ours.noise_floor_db - theirs["trough"]) < 0.5
    else:  # starts in room tone: let ffmpeg's detector settle on a second of tone first
        assert abs(ours.noise_floor_db - settled_trough(path)) < 0.5


def settled_trough(path: Path) -> float:
    """astats' RMS trough of the file played after one second of a 440 Hz tone.

    astats starts tracking its moving RMS before the window has filled, so a file
    that opens with room tone reads low at its very start; the tone in front lets
    the window settle before the file begins, as ours does by waiting it out.
    """
    graph = ("[0:a]aformat=sample_fmts=fltp:sample_rates={r}:channel_layouts=mono[a];"
             "[1:a]aformat=sample_fmts=fltp:sample_rates={r}:channel_layouts=mono[b];"
             "[a][b]concat=n=2:v=0:a=1,astats=measure_perchannel=none")
    rate = measure_file(path).sample_rate
    proc = subprocess.run(
        ["ffmpeg", "-hide_banner", "-nostats", "-f", "lavfi", "-i", f"sine=f=440:d=1:r={rate}", "-i", str(path),
         "-filter_complex", graph.format(r=rate), "-f", "null", "-"],
        capture_output=True, text=True, check=True,
    )
    return float(re.findall(r"RMS trough dB: (-?[\d.]+)", proc.stderr)[-1])


META = BookMeta("Signals", "Ann Author", "Test Voice", "2026")
