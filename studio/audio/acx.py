"""The ACX submission check, per delivered file.

Why a check of our own: a file rejected by the store costs the producer a
round-trip of days, and the rules are few and measurable. Each rule becomes one
:class:`Check` with the measured value, so the CLI, the manifest and the desktop
app show the same figures and the same reasons. The audio rules (RMS, peak,
noise floor, room tone, length, sample rate, channels) apply to every format;
the encoding rule (MP3, 192 kbit/s or more, constant bit rate) only to MP3 --
other formats say "not judged" rather than fail, since ACX takes MP3 only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from studio.audio.ffmpeg import StreamInfo, stream_info
from studio.audio.measure import Levels, measure_file


_LAYOUTS = {1: "mono", 2: "stereo"}


@dataclass(frozen=True)
class AcxRules:
    """The limits; levels in dB, times in seconds, bit rate in bit/s."""

    rms_min_db: float = -23.0
    rms_max_db: float = -18.0
    peak_max_db: float = -3.0
    noise_floor_max_db: float = -60.0
    max_minutes: float = 120.0
    head_s: tuple[float, float] = (0.5, 1.0)
    tail_s: tuple[float, float] = (1.0, 5.0)
    sample_rate: int = 44100
    min_bit_rate: int = 192_000


@dataclass(frozen=True)
class Check:
    """One rule: ``ok`` None means the rule does not apply to this file."""

    name: str
    value: str
    rule: str
    ok: bool | None

    def line(self) -> str:
        mark = {True: "ok  ", False: "FAIL", None: "n/a "}[self.ok]
        return f"{mark} {self.name:<12} {self.value:<22} ({self.rule})"


@dataclass(frozen=True)
class AcxReport:
    file: str
    checks: tuple[Check, ...]
    levels: Levels
    stream: StreamInfo

    @property
    def passed(self) -> bool:
        return all(c.ok is not False for c in self.checks)

    @property
    def reasons(self) -> list[str]:
        """One phrase per failed rule, e.g. ``"peak -0.4 dBFS above -3.0 dBFS"``."""
        return [f"{c.name} {c.value} ({c.rule})" for c in self.checks if c.ok is False]

    def to_dict(self) -> dict[str, object]:
        return {
            "passed": self.passed,
            "reasons": self.reasons,
            "checks": [{"name": c.name, "value": c.value, "rule": c.rule, "ok": c.ok} for c in self.checks],
        }

    def text(self) -> str:
        head = f"{self.file}: {'PASS' if self.passed else 'FAIL'}"
        return "\n".join([head] + [f"  {c.line()}" for c in self.checks])


def check(levels: Levels, stream: StreamInfo, *, cbr: bool | None = None, file: str = "",
          rules: AcxRules | None = None, whole_book: bool = False) -> AcxReport:
    """Judge measured ``levels`` and the ``stream`` ffmpeg saw against ``rules``.

    ``cbr`` is whether an MP3 has a constant bit rate (None: unknown, not judged);
    ``whole_book`` (an M4B or single-file MP3) leaves the per-file length unjudged.
    """
    r = rules or AcxRules()
    minutes = levels.duration / 60
    checks = [
        Check("RMS", f"{levels.rms_db:.1f} dB", f"{r.rms_min_db:g} to {r.rms_max_db:g} dB",
              r.rms_min_db <= levels.rms_db <= r.rms_max_db),
        Check("peak", f"{levels.true_peak_db:.1f} dBFS", f"true peak at most {r.peak_max_db:g} dBFS",
              levels.true_peak_db <= r.peak_max_db),
        Check("noise floor", f"{levels.noise_floor_db:.1f} dB", f"at most {r.noise_floor_max_db:g} dB RMS",
              levels.noise_floor_db <= r.noise_floor_max_db),
        Check("head", f"{levels.head_s:.2f} s", f"{r.head_s[0]:g}-{r.head_s[1]:g} s of room tone",
              r.head_s[0] <= levels.head_s <= r.head_s[1]),
        Check("tail", f"{levels.tail_s:.2f} s", f"{r.tail_s[0]:g}-{r.tail_s[1]:g} s of room tone",
              r.tail_s[0] <= levels.tail_s <= r.tail_s[1]),
        Check("length", f"{minutes:.1f} min", f"at most {r.max_minutes:g} min", minutes <= r.max_minutes)
        if not whole_book else Check("length", f"{minutes:.1f} min", "whole book in one file; not judged", None),
        Check("sample rate", f"{stream.sample_rate} Hz", f"{r.sample_rate} Hz", stream.sample_rate == r.sample_rate)
        if stream.codec != "opus" else Check("sample rate", f"{stream.sample_rate} Hz", "Opus is always 48 kHz", None),
        Check("channels", stream.channel_layout or _LAYOUTS.get(stream.channels, str(stream.channels)),
              "mono or stereo", stream.channels in (1, 2)),
    ]
    kbps = f"{stream.bit_rate / 1000:.0f} kbit/s"
    if stream.codec != "mp3":
        checks.append(Check("encoding", f"{stream.codec} {kbps}", "ACX takes MP3; not judged", None))
    else:
        mode = "" if cbr is None else " CBR" if cbr else " VBR"
        ok = stream.bit_rate >= r.min_bit_rate and cbr is not False
        checks.append(Check("encoding", f"mp3 {kbps}{mode}", f"MP3 at least {r.min_bit_rate // 1000} kbit/s CBR", ok))
    return AcxReport(file, tuple(checks), levels, stream)


def mp3_is_cbr(path: str | Path) -> bool | None:
    """Whether an MP3 is constant bit rate, from its LAME/Xing header (None: cannot tell)."""
    from mutagen.mp3 import MP3, BitrateMode

    mode = MP3(str(path)).info.bitrate_mode
    return None if mode == BitrateMode.UNKNOWN else mode == BitrateMode.CBR


def check_file(path: str | Path, *, levels: Levels | None = None, rules: AcxRules | None = None,
               whole_book: bool = False) -> AcxReport:
    """Measure (unless ``levels`` are given) and judge a delivered file."""
    stream = stream_info(path)
    cbr = mp3_is_cbr(path) if stream.codec == "mp3" else None
    return check(levels or measure_file(path), stream, cbr=cbr, file=Path(path).name, rules=rules,
                 whole_book=whole_book)


__all__ = ["AcxReport", "AcxRules", "Check", "check", "check_file", "mp3_is_cbr"]
