"""Which ffmpeg runs, and reading a file without ffprobe: real binaries, real files.

A Windows or macOS install has the ffmpeg the imageio-ffmpeg wheel ships and no
ffprobe; these tests run that situation here (PATH emptied) and check that ffmpeg's
own listing says what ffprobe says about every format the studio writes.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from studio.audio import ffmpeg
from studio.audio.acx import check_file
from studio.audio.containers import write_delivery
from studio.audio.tags import BookMeta, ChapterMark, Cover, Track
from studio.audio.writers import write_audio, write_mp3
from studio.core.errors import StudioError

SR = 22050
SYSTEM_FFMPEG = shutil.which("ffmpeg")
SYSTEM_FFPROBE = shutil.which("ffprobe")
WHEEL_FFMPEG = ffmpeg.wheel_ffmpeg()

needs_wheel = pytest.mark.skipif(WHEEL_FFMPEG is None, reason="imageio-ffmpeg is not installed")


def speechlike(seconds: float, sr: int = SR) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return (0.3 * np.sin(2 * np.pi * 180 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One file of each format the studio writes, by the ffmpeg it runs."""
    folder = tmp_path_factory.mktemp("formats")
    audio = speechlike(2.5)
    files = {fmt: write_audio(folder / f"ch.{fmt}", audio, SR, fmt) for fmt in ("mp3", "flac", "opus", "wav")}
    png = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 80, 40)).save(png, "PNG")
    meta = BookMeta("Book: a test?", cover=Cover.from_bytes(png.getvalue()))  # the cover: a picture stream beside the audio
    files["m4b"] = write_delivery(folder / "book.m4b", audio, SR, "m4b", meta, Track("Book", 1, 1),
                                  [ChapterMark("One", 0.0, 1.2), ChapterMark("Two", 1.2, 2.5)])
    files["tagged"] = write_delivery(folder / "tagged.mp3", audio, SR, "mp3", meta, Track("One", 1, 2))
    files["cbr"] = write_mp3(folder / "acx.mp3", audio, SR, bitrate="192k")
    return files


@needs_wheel
def test_the_newer_ffmpeg_is_chosen() -> None:
    assert ffmpeg.choose_ffmpeg(None, WHEEL_FFMPEG) == WHEEL_FFMPEG
    assert ffmpeg.choose_ffmpeg(None, None) is None
    if SYSTEM_FFMPEG is None:
        return
    assert ffmpeg.choose_ffmpeg(SYSTEM_FFMPEG, None) == SYSTEM_FFMPEG
    have, shipped = ffmpeg.ffmpeg_version(SYSTEM_FFMPEG), ffmpeg.ffmpeg_version(WHEEL_FFMPEG)
    assert shipped is not None and len(shipped) >= 2  # the wheel's build names its release
    expected = WHEEL_FFMPEG if have is not None and have < shipped else SYSTEM_FFMPEG
    assert ffmpeg.choose_ffmpeg(SYSTEM_FFMPEG, WHEEL_FFMPEG) == expected


@pytest.mark.skipif(SYSTEM_FFPROBE is None, reason="no ffprobe to compare with")
@pytest.mark.parametrize("fmt", ["mp3", "flac", "opus", "wav", "m4b", "cbr", "tagged"])
def test_ffmpegs_listing_says_what_ffprobe_says(written: dict[str, Path], fmt: str) -> None:
    exact = ffmpeg._by_ffprobe(SYSTEM_FFPROBE, written[fmt])
    listed = ffmpeg._by_ffmpeg(ffmpeg.find_ffmpeg(), written[fmt])
    assert (listed.codec, listed.sample_rate, listed.channels) == (exact.codec, exact.sample_rate, exact.channels)
    assert listed.channel_layout in (exact.channel_layout, "", "mono")  # ffmpeg 7 names a WAV's one channel
    assert abs(listed.duration - exact.duration) <= 0.011  # the listing gives hundredths
    if exact.bit_rate:
        assert abs(listed.bit_rate - exact.bit_rate) <= 1500  # and whole kb/s


@needs_wheel
def test_a_machine_with_only_the_wheel_writes_and_checks_an_mp3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ffmpeg and no ffprobe on PATH (a fresh Windows or macOS): export and the ACX check still work."""
    monkeypatch.delenv(ffmpeg.FFMPEG_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ffmpeg.find_ffmpeg() == WHEEL_FFMPEG and ffmpeg.find_ffprobe() is None
    path = write_mp3(tmp_path / "Chapter 1.mp3", speechlike(3.0, 44100), 44100, bitrate="192k")  # as ACX asks
    info = ffmpeg.stream_info(path)
    assert info.codec == "mp3" and info.channels == 1 and abs(info.duration - 3.0) < 0.1
    assert 188_000 <= info.bit_rate <= 196_000
    report = check_file(path)
    assert report.stream.sample_rate == info.sample_rate == 44100


def test_no_ffmpeg_anywhere_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ffmpeg.FFMPEG_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(ffmpeg, "wheel_ffmpeg", lambda: None)  # the package not installed
    with pytest.raises(StudioError, match="ffmpeg was not found"):
        write_mp3(tmp_path / "x.mp3", speechlike(0.1), SR)
    assert not list(tmp_path.glob("*.mp3"))
    monkeypatch.setenv(ffmpeg.FFMPEG_ENV, str(tmp_path / "nope"))
    with pytest.raises(StudioError, match=ffmpeg.FFMPEG_ENV):
        write_mp3(tmp_path / "x.mp3", speechlike(0.1), SR)


def test_a_file_ffmpeg_cannot_read_is_a_studio_error(tmp_path: Path) -> None:
    bad = tmp_path / "not audio.mp3"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(StudioError, match="could not read"):
        ffmpeg._by_ffmpeg(ffmpeg.find_ffmpeg(), bad)
