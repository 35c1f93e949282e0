"""The one table of output formats: suffix, ffmpeg codec options, bit rate.

Why one table: every format goes the same way -- mono 16-bit PCM piped into
ffmpeg (WAV: the standard library), written under a temp name, renamed into
place -- and differs only in codec options; the plain chapter export (``studio
render -o``), the delivery export (``studio export``) and both commands' option
lists read them here. No numpy and no ffmpeg here, so ``studio --help`` stays light.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from studio.core.errors import StudioError


@dataclass(frozen=True)
class Encoding:
    """How one format is encoded; ``cbr`` is the constant bit rate, when there is one;
    ``whole_book`` formats hold the whole book in one file (chapter export cannot write them)."""

    suffix: str
    args: tuple[str, ...]
    cbr: str | None = None
    whole_book: bool = False

    def with_bitrate(self, bitrate: str | None) -> "Encoding":
        """The same encoding at another ``-b:a`` bit rate (formats without one ignore it)."""
        if not bitrate or "-b:a" not in self.args:
            return self
        args = list(self.args)
        args[args.index("-b:a") + 1] = bitrate
        return replace(self, args=tuple(args), cbr=bitrate if self.cbr else None)


#: M4B: AAC at 128 kbit/s without perceptual noise substitution -- PNS resynthesizes
#: noisy bands (sibilants, room tone) with random phases, which undoes the limiter
#: (true peaks up to 3 dB over the ceiling at 96 kbit/s with it on). MP3: 192 kbit/s
#: CBR with an ID3v2.3 tag (what ACX asks for); the plain chapter export passes its
#: own ``bitrate``.
FORMATS: dict[str, Encoding] = {
    "m4b": Encoding(".m4b", ("-c:a", "aac", "-b:a", "128k", "-aac_pns", "0", "-brand", "M4B ", "-movflags", "+faststart",
                               "-f", "ipod"), whole_book=True),
    "mp3": Encoding(".mp3", ("-c:a", "libmp3lame", "-b:a", "192k", "-id3v2_version", "3", "-f", "mp3"), cbr="192k"),
    "flac": Encoding(".flac", ("-c:a", "flac", "-f", "flac")),
    "opus": Encoding(".opus", ("-c:a", "libopus", "-b:a", "64k", "-f", "opus")),
    "wav": Encoding(".wav", ("-c:a", "pcm_s16le", "-f", "wav")),
}


def encoding(fmt: str) -> Encoding:
    """The table's entry for ``fmt``, or a StudioError naming the formats there are."""
    try:
        return FORMATS[fmt]
    except KeyError:
        raise StudioError(f"unknown output format '{fmt}' (choose one of: {', '.join(FORMATS)})") from None


__all__ = ["Encoding", "FORMATS", "encoding"]
