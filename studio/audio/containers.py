"""Delivery files: M4B (AAC in MP4, with chapters), MP3, FLAC, Opus and WAV.

The codec options live in the one format table, :data:`studio.audio.writers.FORMATS`;
this module adds what a delivered file carries beyond the audio: tags and cover
written with mutagen (:mod:`studio.audio.tags`) on the temp file before it is
renamed into place, and chapter markers. M4B
chapters go in as an FFMETADATA file with an explicit ``TIMEBASE=1/1000`` (the
default time base differs between ffmpeg versions; milliseconds are what
chapter start times are checked against).
"""

from __future__ import annotations

import os
import struct
import tempfile
from pathlib import Path
from typing import Sequence

from studio.audio.tags import BookMeta, ChapterMark, Track, tag_mp3, tag_mp4, tag_vorbis
from studio.audio.formats import encoding
from studio.audio.pcm import atomic_write_bytes
from studio.audio.writers import AudioInput, encode_ffmpeg
from studio.core.errors import StudioError


def _escape(value: str) -> str:
    """FFMETADATA escaping: ``= ; # \\`` and line breaks take a backslash."""
    out = []
    for ch in value:
        if ch in "=;#\\\n":
            out.append("\\")
        out.append(ch)
    return "".join(out)


def ffmetadata(meta: BookMeta, chapters: Sequence[ChapterMark]) -> str:
    """An FFMETADATA1 document: the book's title and author, one [CHAPTER] per mark (ms)."""
    lines = [";FFMETADATA1", f"title={_escape(meta.title)}"]
    if meta.author:
        lines.append(f"artist={_escape(meta.author)}")
    for mark in chapters:
        lines += [
            "[CHAPTER]", "TIMEBASE=1/1000",
            f"START={int(round(mark.start * 1000))}", f"END={int(round(mark.end * 1000))}",
            f"title={_escape(mark.title)}",
        ]
    return "\n".join(lines) + "\n"


def write_delivery(
    path: str | Path,
    audio: AudioInput,
    sample_rate: int,
    fmt: str,
    meta: BookMeta,
    track: Track,
    chapters: Sequence[ChapterMark] = (),
) -> Path:
    """Encode ``audio`` as ``fmt`` into ``path``, tagged, atomically.

    ``chapters`` become M4B chapter markers, or ID3 chapter frames in an MP3;
    other formats ignore them (one file per chapter needs none).
    """
    enc = encoding(fmt)
    args = list(enc.args)
    inputs: list[str] = []
    meta_file: str | None = None
    if fmt == "m4b":
        fd, meta_file = tempfile.mkstemp(prefix="studio-chapters-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:  # the same bytes on Windows
            fh.write(ffmetadata(meta, chapters))
        inputs = ["-f", "ffmetadata", "-i", meta_file]
        args = ["-map", "0:a", "-map_metadata", "1", "-map_chapters", "1", *args]

    def tag(tmp: Path) -> None:
        if fmt == "mp3":
            tag_mp3(tmp, meta, track, chapters)
        elif fmt == "m4b":
            tag_mp4(tmp, meta)
        elif fmt in ("flac", "opus"):
            tag_vorbis(tmp, meta, track)

    try:
        return encode_ffmpeg(path, audio, sample_rate, args, suffix=enc.suffix, inputs=inputs, cbr=enc.cbr,
                             prepare=tag)
    finally:
        if meta_file:
            os.unlink(meta_file)


def _ogg_crc(data: bytes) -> int:
    """The Ogg page checksum: CRC-32, polynomial 0x04C11DB7, not reflected, no final XOR."""
    crc = 0
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc


def set_opus_gain(path: str | Path, gain_db: float) -> None:
    """Set an Ogg Opus file's output gain (OpusHead, Q7.8 dB) to ``gain_db``, atomically.

    Why: the Opus encoder moves true peaks by a few tenths of a dB in ways a second
    master does not predict (three tries came out 0.18, 0.09, 0.06 dB over). The
    output gain is applied by every decoder (RFC 7845 says it must), exactly, so a
    final gain step measured after decoding lands where it is meant to.
    """
    target = Path(path)
    data = bytearray(target.read_bytes())
    if data[:4] != b"OggS" or b"OpusHead" not in data[:300]:
        raise StudioError(f"{target.name} is not an Ogg Opus file")
    segments = data[26]
    header = 27 + segments
    body = data.index(b"OpusHead", header)
    if body != header:
        raise StudioError(f"{target.name}: unexpected first Ogg page")
    length = header + sum(data[27:27 + segments])
    struct.pack_into("<h", data, body + 16, int(round(gain_db * 256)))
    struct.pack_into("<I", data, 22, 0)
    struct.pack_into("<I", data, 22, _ogg_crc(bytes(data[:length])))
    atomic_write_bytes(target, bytes(data))


__all__ = ["ffmetadata", "set_opus_gain", "write_delivery"]
