"""Audio file writers: WAV (standard library) and every other format of
:data:`studio.audio.formats.FORMATS` through ffmpeg.

Every writer writes to a temp file beside the target and renames it into
place, so a player, a sync client or a crash never sees a half-written chapter. A
full disk raises :class:`~studio.core.errors.DiskFull` (the temp file is removed,
earlier chapters stay).
"""

from __future__ import annotations

import logging
import re
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Union

import numpy as np

from studio.audio.ffmpeg import find_ffmpeg
from studio.audio.formats import FORMATS, encoding
from studio.audio.pcm import atomic_output, atomic_path, to_int16
from studio.core.errors import DiskFull, StudioError

log = logging.getLogger(__name__)



#: A whole signal, or an iterable of consecutive blocks (so a long chapter can be
#: written without holding all of it in memory).
AudioInput = Union[np.ndarray, Iterable[np.ndarray]]


def _blocks(audio: AudioInput) -> Iterator[bytes]:
    if isinstance(audio, np.ndarray):
        yield to_int16(audio).tobytes()
        return
    for block in audio:
        yield to_int16(block).tobytes()


@dataclass(frozen=True)
class AudioTags:
    """ID3 tags for one chapter file; ``track`` may be ``"3"`` or ``"3/12"``."""

    title: str = ""
    artist: str = ""
    album: str = ""
    track: str = ""

    def ffmpeg_args(self) -> list[str]:
        """``-metadata key=value`` for every tag that is set."""
        args: list[str] = []
        for key in ("title", "artist", "album", "track"):
            value = getattr(self, key)
            if value:
                args += ["-metadata", f"{key}={value}"]
        return args


def write_wav(path: str | Path, audio: AudioInput, sample_rate: int) -> Path:
    """Write mono 16-bit PCM WAV atomically (``audio`` may be blocks); returns the path."""
    target = Path(path)
    with atomic_output(target, suffix=".wav") as fh:
        with wave.open(fh, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(int(sample_rate))
            for data in _blocks(audio):
                w.writeframesraw(data)
    return target


def write_mp3(
    path: str | Path,
    audio: AudioInput,
    sample_rate: int,
    tags: AudioTags | None = None,
    *,
    bitrate: str = "128k",
) -> Path:
    """Encode mono MP3 (libmp3lame, CBR ``bitrate``) with ID3v2.3 tags, atomically.

    ffmpeg writes a LAME/Xing header carrying encoder delay and padding, which lets
    players (and ffprobe) report the exact duration.
    """
    enc = FORMATS["mp3"].with_bitrate(bitrate)
    return encode_ffmpeg(path, audio, sample_rate, [*(tags or AudioTags()).ffmpeg_args(), *enc.args], suffix=enc.suffix,
                         cbr=enc.cbr)


def encode_ffmpeg(
    path: str | Path,
    audio: AudioInput,
    sample_rate: int,
    output_args: list[str],
    *,
    suffix: str,
    inputs: list[str] | None = None,
    cbr: str | None = None,
    prepare: Callable[[Path], None] | None = None,
) -> Path:
    """Pipe mono 16-bit PCM through ffmpeg into ``path``, atomically.

    Raw PCM goes to ffmpeg over stdin (input 0), so no intermediate WAV is
    written; ``inputs`` are further ``-i`` arguments (a metadata file, say) and
    ``output_args`` the codec, mapping and muxer options. ``cbr`` (e.g. "192k")
    lets a truncated constant-bit-rate file be caught by its size. ``prepare``
    gets the finished temp file before it is renamed into place (to add tags),
    so the final name only ever holds a complete, tagged file.
    """
    target = Path(path)
    ffmpeg = find_ffmpeg()
    with atomic_path(target, suffix=suffix) as tmp, tempfile.TemporaryFile() as errors:
        cmd = [
            ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
            "-f", "s16le", "-ar", str(int(sample_rate)), "-ac", "1", "-i", "pipe:0",
            *(inputs or []), *output_args, str(tmp),
        ]
        log.debug("running %s", cmd)
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors)
        except OSError as err:
            raise StudioError(f"could not run ffmpeg ({ffmpeg}): {err}") from err
        assert proc.stdin is not None
        sent = 0
        try:
            for data in _blocks(audio):
                proc.stdin.write(data)
                sent += len(data)
            proc.stdin.close()
            code = proc.wait()
        except BrokenPipeError:
            code = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        errors.seek(0)
        text = errors.read().decode(errors="replace").strip()
        # ffmpeg (5.x) exits 0 when writing the trailer or closing the file fails --
        # e.g. on a full disk -- leaving a truncated file: its messages, and the size
        # a CBR stream must have, are checked too, so such a file is never renamed
        # into place as a finished chapter.
        if code == 0 and (_WRITE_ERRORS.search(text) or (cbr and _too_small(tmp, sent / 2 / sample_rate, cbr))):
            code = -1
        if code != 0:
            lines = text.splitlines()
            reason = lines[-1] if lines else f"exit code {code}"
            if "No space left on device" in text or "Disk quota exceeded" in text:
                raise DiskFull(target)
            if code == -1 and not lines:
                reason = "the encoded file came out truncated"
            if "Unknown encoder" in text:
                reason += " (this ffmpeg lacks the encoder)"
            raise StudioError(f"ffmpeg could not write {target.name}: {reason}")
        if prepare is not None:
            prepare(tmp)
    return target


_WRITE_ERRORS = re.compile(r"Error (?:writing|closing)|No space left on device|Disk quota exceeded|Input/output error")


def _too_small(path: Path, seconds: float, bitrate: str) -> bool:
    """Whether an MP3 is far smaller than ``seconds`` at a constant ``bitrate`` gives
    (a backstop: a quarter, so a bitrate LAME lowers for a low sample rate passes)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kK]?)", bitrate.strip())
    if not m or seconds <= 0:
        return False
    bits_per_s = float(m.group(1)) * (1000 if m.group(2) else 1)
    try:
        size = path.stat().st_size
    except OSError:
        return True
    return size < 0.25 * seconds * bits_per_s / 8


def write_audio(
    path: str | Path,
    audio: AudioInput,
    sample_rate: int,
    fmt: str,
    tags: AudioTags | None = None,
    *,
    bitrate: str = "128k",
) -> Path:
    """One chapter file in ``fmt`` (any of :data:`FORMATS` but the whole-book ones),
    tagged by ffmpeg; WAV carries no tags. ``bitrate`` applies to MP3 and Opus."""
    enc = encoding(fmt).with_bitrate(bitrate if fmt == "mp3" else None)
    if enc.whole_book:
        raise StudioError(f"{fmt} holds a whole book; write it with `studio export --format {fmt}`")
    if fmt == "wav":
        return write_wav(path, audio, sample_rate)
    return encode_ffmpeg(path, audio, sample_rate, [*(tags or AudioTags()).ffmpeg_args(), *enc.args],
                         suffix=enc.suffix, cbr=enc.cbr)
