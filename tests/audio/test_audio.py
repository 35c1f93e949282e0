"""Audio layer on real files: pauses, resampling, WAV and MP3 (real ffmpeg)."""

from __future__ import annotations

import os
import stat
import wave
from pathlib import Path

import numpy as np
import pytest

from studio.audio.assemble import Clip, Pauses, assemble_chapter, iter_chapter
from studio.audio.pcm import atomic_write_bytes, read_wav, read_wav_bytes, to_int16, wav_bytes
from studio.audio.resample import resample
from studio.audio.writers import AudioTags, write_audio, write_mp3, write_wav
from studio.core.errors import StudioError
from support.render import ffprobe_duration

SR = 22050


def tone(seconds: float, freq: float = 440.0, sr: int = SR) -> np.ndarray:
    t = np.arange(int(round(seconds * sr))) / sr
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def silent_runs(audio: np.ndarray) -> list[int]:
    """Lengths of the runs of exact zeros (the inserted pauses)."""
    runs, n = [], 0
    for is_zero in audio == 0:
        if is_zero:
            n += 1
        elif n:
            runs.append(n)
            n = 0
    if n:
        runs.append(n)
    return runs


def test_pause_lengths_are_respected() -> None:
    ones = lambda s: Clip(np.full(int(s * SR), 0.25, np.float32), SR)  # noqa: E731
    pauses = Pauses(sentence=0.35, paragraph=0.8, title=1.5, chapter_end=0.2)
    out = assemble_chapter(ones(0.5), [[ones(1.0), ones(0.3)], [ones(0.4)]], pauses, SR)
    assert silent_runs(out) == [int(1.5 * SR), int(0.35 * SR), int(0.8 * SR), int(0.8 * SR + 0.2 * SR)]
    expected = 0.5 + 1.5 + 1.0 + 0.35 + 0.3 + 0.8 + 0.4 + 0.8 + 0.2
    assert abs(out.size / SR - expected) < 1e-3
    # title first: the very first samples are the title clip
    assert out[0] == pytest.approx(0.25)
    # no title: chapter starts straight with speech
    assert assemble_chapter(None, [[ones(0.1)]], Pauses(), SR).size == int(0.1 * SR) + int(0.8 * SR)


def test_default_pauses_and_validation() -> None:
    p = Pauses()
    assert (p.sentence, p.paragraph, p.title) == (0.35, 0.8, 1.5)
    with pytest.raises(StudioError):
        Pauses(sentence=-1)


def test_mixed_rate_clips_are_resampled_to_the_chapter_rate() -> None:
    blocks = list(iter_chapter(None, [[Clip(tone(1.0, sr=11025), 11025), Clip(tone(1.0), SR)]], Pauses(), SR))
    total = sum(b.size for b in blocks)
    assert abs(total / SR - (1.0 + 0.35 + 1.0 + 0.8)) < 1e-3


def test_resample_to_44100_keeps_duration_and_pitch() -> None:
    x = tone(2.0, 1000.0)
    y = resample(x, SR, 44100)
    assert y.dtype == np.float32 and y.size == 2 * x.size
    spectrum = np.abs(np.fft.rfft(y * np.hanning(y.size)))
    peak_hz = np.argmax(spectrum) * 44100 / y.size
    assert abs(peak_hz - 1000.0) < 2.0
    # band-limited: no energy near the old Nyquist image (~21 kHz)
    image = spectrum[int(20000 * y.size / 44100):].max()
    assert image < spectrum.max() * 1e-3
    assert resample(x, SR, SR).size == x.size
    with pytest.raises(StudioError):
        resample(x, 0, 44100)


def test_wav_is_16bit_pcm_mono_at_the_rate(tmp_path: Path) -> None:
    path = write_wav(tmp_path / "a.wav", [tone(0.5), tone(0.25)], 44100)
    with wave.open(str(path)) as w:
        assert (w.getsampwidth(), w.getnchannels(), w.getframerate(), w.getcomptype()) == (2, 1, 44100, "NONE")
        assert w.getnframes() == tone(0.5).size + tone(0.25).size
    audio, rate = read_wav(path)
    assert rate == 44100 and np.max(np.abs(audio - np.concatenate([tone(0.5), tone(0.25)]))) < 1e-4
    assert [p.name for p in tmp_path.iterdir()] == ["a.wav"]  # no temp files left
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600


def test_int16_conversion_clips_instead_of_wrapping() -> None:
    pcm = to_int16(np.array([2.0, -2.0, 0.5], np.float32))
    assert pcm.tolist() == [32767, -32767, 16384]
    audio, rate = read_wav_bytes(wav_bytes(np.zeros(10, np.float32), 8000))
    assert rate == 8000 and audio.size == 10
    with pytest.raises(ValueError):
        read_wav_bytes(b"RIFF....junk")


def test_mp3_decodes_with_the_right_duration_and_tags(tmp_path: Path) -> None:
    import subprocess

    audio = np.concatenate([tone(1.3), np.zeros(int(0.7 * SR), np.float32)])
    tags = AudioTags(title="Chapter: One", artist="Ann Author", album="Test Book", track="1/3")
    path = write_mp3(tmp_path / "01 - One.mp3", audio, SR, tags)
    assert abs(ffprobe_duration(path) - 2.0) < 0.1
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format_tags:stream=codec_name,sample_rate,channels",
         "-of", "default=nw=1", str(path)], capture_output=True, text=True, check=True,
    ).stdout
    for needle in ("codec_name=mp3", "sample_rate=22050", "channels=1", "TAG:title=Chapter: One",
                   "TAG:artist=Ann Author", "TAG:album=Test Book", "TAG:track=1/3"):
        assert needle in probe
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01 - One.mp3"]


def test_mp3_at_44100_after_resampling(tmp_path: Path) -> None:
    path = write_audio(tmp_path / "x.mp3", resample(tone(3.0), SR, 44100), 44100, "mp3")
    assert abs(ffprobe_duration(path) - 3.0) < 0.1


def test_failed_write_leaves_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "keep.wav"
    atomic_write_bytes(target, b"old")

    def boom():
        yield tone(0.1)
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        write_wav(target, boom(), SR)
    with pytest.raises(RuntimeError):
        write_mp3(tmp_path / "keep.mp3", boom(), SR)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.wav"]
    with pytest.raises(StudioError, match="unknown output format"):
        write_audio(tmp_path / "x.ogg", tone(0.1), SR, "ogg")
