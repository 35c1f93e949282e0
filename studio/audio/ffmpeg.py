"""Which ffmpeg the studio runs, and what it says about a file (no ffprobe needed).

Why a wheel's ffmpeg: a producer on Windows or macOS has no package manager that
brings ffmpeg, so the install carries one (imageio-ffmpeg ships a static ffmpeg for
the three systems). The system's ffmpeg is still taken where it is at least as new
(a distribution's build, kept up to date by it); ``$STUDIO_FFMPEG`` overrides both.

Why :func:`stream_info` reads ``ffmpeg -i`` when there is no ffprobe: the wheel ships
ffmpeg alone. ffprobe is used where it is found (its figures are exact); ffmpeg's
own listing gives the same fields, the duration to 10 ms and bit rates to 1 kb/s.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from studio.core.errors import StudioError

log = logging.getLogger(__name__)

FFMPEG_ENV = "STUDIO_FFMPEG"


def find_ffmpeg() -> str:
    """Path of the ``ffmpeg`` to run (``$STUDIO_FFMPEG`` wins), or a StudioError."""
    override = os.environ.get(FFMPEG_ENV)
    if override:
        if Path(override).is_file() and os.access(override, os.X_OK):
            return override
        raise StudioError(f"{FFMPEG_ENV} points to {override}, which is not an executable file")
    chosen = choose_ffmpeg(shutil.which("ffmpeg"), wheel_ffmpeg())
    if chosen is None:
        raise StudioError(
            "ffmpeg was not found (neither on PATH nor from the imageio-ffmpeg package); MP3, M4B and Opus "
            "export need it: reinstall with the installer, or 'pip install imageio-ffmpeg', or export WAV"
        )
    return chosen


def wheel_ffmpeg() -> str | None:
    """The ffmpeg the imageio-ffmpeg package ships, where it is installed (read from the package's
    folder: its own lookup falls back to the system's ffmpeg, which is not what is asked here)."""
    try:
        folder = resources.files("imageio_ffmpeg") / "binaries"
    except ModuleNotFoundError:
        return None
    found = sorted(str(p) for p in folder.iterdir() if p.name.startswith("ffmpeg") and p.is_file())
    return found[-1] if found else None  # none: a source install of the package, for a system it has no build for


def choose_ffmpeg(system: str | None, wheel: str | None) -> str | None:
    """The system's ffmpeg where it is at least as new as the wheel's (or either's version is
    unknown), else the wheel's; whichever exists where only one does."""
    if system is None or wheel is None:
        return system or wheel
    have, shipped = ffmpeg_version(system), ffmpeg_version(wheel)
    if have is not None and shipped is not None and have < shipped:
        log.info("ffmpeg: the package's %s is newer than the system's %s; using it",
                 ".".join(map(str, shipped)), ".".join(map(str, have)))
        return wheel
    return system


@functools.lru_cache(maxsize=8)
def ffmpeg_version(exe: str) -> tuple[int, ...] | None:
    """``(7, 1)`` from ``ffmpeg -version``; None for a build that names no release (``N-1234-g...``)."""
    try:
        out = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=20,
                             encoding="utf-8", errors="replace").stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.match(r"ffmpeg version n?(\d+(?:\.\d+)*)", out)
    return tuple(int(p) for p in found.group(1).split(".")) if found else None


@dataclass(frozen=True)
class StreamInfo:
    """What ffmpeg says about a file's first audio stream (``bit_rate`` in bit/s, 0 unknown)."""

    codec: str
    sample_rate: int
    channels: int
    channel_layout: str
    bit_rate: int
    duration: float


def find_ffprobe() -> str | None:
    """ffprobe beside the chosen ffmpeg, else on PATH; None where there is none (a wheel-only install)."""
    ffmpeg = Path(find_ffmpeg())
    beside = ffmpeg.with_name("ffprobe.exe" if ffmpeg.suffix.lower() == ".exe" else "ffprobe")
    return str(beside) if beside.is_file() else shutil.which("ffprobe")


def stream_info(path: str | Path) -> StreamInfo:
    """The first audio stream of ``path``: by ffprobe where there is one, else by ffmpeg's listing."""
    ffprobe = find_ffprobe()
    return _by_ffprobe(ffprobe, path) if ffprobe else _by_ffmpeg(find_ffmpeg(), path)


def _by_ffprobe(ffprobe: str, path: str | Path) -> StreamInfo:
    cmd = [ffprobe, "-v", "error", "-select_streams", "a:0", "-show_entries",
           "stream=codec_name,sample_rate,channels,channel_layout,bit_rate:format=duration,bit_rate",
           "-of", "json", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", errors="replace", check=False)
    if proc.returncode != 0:
        raise StudioError(f"ffprobe could not read {Path(path).name}: {proc.stderr.strip()}")
    info = json.loads(proc.stdout or "{}")
    streams = info.get("streams") or [{}]
    stream, fmt = streams[0], info.get("format") or {}
    return StreamInfo(
        codec=str(stream.get("codec_name", "")),
        sample_rate=int(stream.get("sample_rate") or 0),
        channels=int(stream.get("channels") or 0),
        channel_layout=str(stream.get("channel_layout", "")),
        bit_rate=int(stream.get("bit_rate") or fmt.get("bit_rate") or 0),
        duration=float(fmt.get("duration") or 0.0),
    )


#: ``Duration: 00:01:02.50, start: 0.025057, bitrate: 64 kb/s``
_DURATION = re.compile(r"Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)(?:.*?bitrate: (\d+) kb/s)?")
#: ``Stream #0:0(und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, mono, fltp, 64 kb/s (default)``
_AUDIO = re.compile(r"Stream #\d+:\d+.*?: Audio: (\w+)[^,]*, (\d+) Hz, ([^,]+)(?:, [^,]+)?(?:, (\d+) kb/s)?")
_LAYOUT_CHANNELS = {"mono": 1, "stereo": 2, "2.1": 3, "quad": 4, "5.0": 5, "5.1": 6, "7.1": 8}


def _by_ffmpeg(ffmpeg: str, path: str | Path) -> StreamInfo:
    proc = subprocess.run([ffmpeg, "-hide_banner", "-nostdin", "-i", str(path)], capture_output=True, text=True,
                          encoding="utf-8", errors="replace", check=False)
    listing = proc.stderr  # no output file: ffmpeg lists the input and exits 1
    if "Input #0" not in listing:
        raise StudioError(f"ffmpeg could not read {Path(path).name}: {listing.strip()[-400:]}")
    duration, format_kbps = 0.0, 0
    if found := _DURATION.search(listing):
        h, m, s = found.group(1, 2, 3)
        duration = int(h) * 3600 + int(m) * 60 + float(s)
        format_kbps = int(found.group(4) or 0)
    audio = _AUDIO.search(listing)
    if audio is None:
        return StreamInfo("", 0, 0, "", format_kbps * 1000, duration)
    layout = audio.group(3).strip()
    counted = re.fullmatch(r"(\d+) channels", layout)
    channels = int(counted.group(1)) if counted else _LAYOUT_CHANNELS.get(layout.split("(")[0], 0)
    return StreamInfo(
        codec=audio.group(1),
        sample_rate=int(audio.group(2)),
        channels=channels,
        channel_layout="" if counted else layout,
        bit_rate=(int(audio.group(4) or 0) or format_kbps) * 1000,  # a stream's "0 kb/s": unknown
        duration=duration,
    )


__all__ = ["FFMPEG_ENV", "StreamInfo", "choose_ffmpeg", "ffmpeg_version", "find_ffmpeg", "find_ffprobe",
           "stream_info", "wheel_ffmpeg"]
