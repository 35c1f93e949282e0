"""PCM conversions, silence, WAV bytes and atomic file replacement.

Why one module: the audio cache and the chapter writers must agree bit for bit on
how float audio becomes 16-bit PCM and how a file reaches disk, otherwise a
checksum written by one and verified by the other would drift.
"""

from __future__ import annotations

import io
import logging
import os
import re
import tempfile
import wave
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

import numpy as np

from studio.core.errors import DiskFull, StudioError, is_disk_full
from studio.core.system import umask

log = logging.getLogger(__name__)

INT16_SCALE = 32767.0


def to_float32(audio: np.ndarray) -> np.ndarray:
    """Any mono audio (float or int16) as contiguous float32 in [-1, 1]."""
    arr = np.asarray(audio)
    if arr.dtype == np.int16:
        return (arr.astype(np.float32) / INT16_SCALE).reshape(-1)
    arr = arr.astype(np.float32, copy=False).reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise StudioError("audio contains NaN or infinite samples")
    return arr


def to_int16(audio: np.ndarray) -> np.ndarray:
    """Float audio -> little-endian 16-bit PCM, clipped (never wrapped) at full scale."""
    arr = np.asarray(audio)
    if arr.dtype == np.int16:
        return arr.reshape(-1).astype("<i2", copy=False)
    arr = to_float32(arr)
    return np.round(np.clip(arr, -1.0, 1.0) * INT16_SCALE).astype("<i2")


def silence(seconds: float, sample_rate: int) -> np.ndarray:
    """``seconds`` of float32 digital silence (rounded to whole samples)."""
    return np.zeros(max(0, int(round(seconds * sample_rate))), dtype=np.float32)


def wav_bytes(audio: np.ndarray, sample_rate: int) -> bytes:
    """A complete mono 16-bit PCM WAV file as bytes."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(to_int16(audio).tobytes())
    return buf.getvalue()


def read_wav_bytes(data: bytes) -> tuple[np.ndarray, int]:
    """Parse a mono 16-bit PCM WAV; returns float32 audio and its sample rate.

    Raises ``ValueError`` for anything else (also for truncated data), which the
    cache turns into "corrupt, render again".
    """
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            if w.getnchannels() != 1 or w.getsampwidth() != 2:
                raise ValueError("expected mono 16-bit PCM")
            rate = w.getframerate()
            frames = w.readframes(w.getnframes())
    except (wave.Error, EOFError) as err:
        raise ValueError(f"not a readable WAV file: {err}") from err
    if len(frames) % 2:
        raise ValueError("truncated WAV data")
    return to_float32(np.frombuffer(frames, dtype="<i2")), rate


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    """Read a mono 16-bit WAV file from disk (float32, sample rate)."""
    return read_wav_bytes(Path(path).read_bytes())


def fsync_dir(folder: Path) -> None:
    """Make a rename durable; a no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: str | Path, *, suffix: str = ".tmp") -> Iterator[Path]:
    """Yield a temp path beside ``path``; on success fsync it and rename it over ``path``.

    Why: an interrupted render or export must never leave a half-written file under
    the final name (a player would show a truncated chapter, the cache a corrupt
    sentence). On any exception the temp file is removed and ``path`` is untouched.
    The temp name keeps ``suffix`` so tools that pick a format from the file name
    (ffmpeg) still do the right thing.

    A full disk (ENOSPC/EDQUOT) is raised as :class:`~studio.core.errors.DiskFull`
    naming ``path``, after the temp file is removed (which gives the space back).
    A process killed meanwhile leaves only the hidden temp file (see
    :func:`stale_temp_files`), never a partial file under the final name.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=suffix, dir=target.parent)
    except OSError as err:
        if is_disk_full(err):
            raise DiskFull(target) from err
        raise
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        os.chmod(tmp, 0o666 & ~umask())  # mkstemp makes 0600; give the usual permissions
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if is_disk_full(exc):
            raise DiskFull(target) from exc
        raise


def stale_temp_files(path: str | Path, *, suffix: str = ".tmp") -> list[Path]:
    """Temp files :func:`atomic_path` left beside ``path`` when its writer was killed.

    Matches exactly the names ``mkstemp`` made for this target (``.<stem>.<8 random
    characters><suffix>``), nothing a user could have put there.
    """
    target = Path(path)
    pattern = re.compile(rf"\.{re.escape(target.stem)}\.[a-z0-9_]{{8}}{re.escape(suffix)}")
    try:
        return [p for p in target.parent.iterdir() if pattern.fullmatch(p.name)]
    except OSError:
        return []


@contextmanager
def atomic_output(path: str | Path, *, suffix: str = ".tmp") -> Iterator[IO[bytes]]:
    """Like :func:`atomic_path` but yields the temp file opened for binary writing."""
    with atomic_path(path, suffix=suffix) as tmp:
        with open(tmp, "wb") as fh:
            yield fh


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename)."""
    with atomic_output(path) as fh:
        fh.write(data)
