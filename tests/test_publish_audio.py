"""Mastering, measurement and the ACX check on generated signals, cross-checked
against ffmpeg's own ``astats`` and ``ebur128`` filters (real ffmpeg, real files)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pyloudnorm
import pytest

from studio.audio.acx import check_file
from studio.audio.containers import ffmetadata, write_delivery
from studio.audio.mastering import MasteringConfig, limit, master, room_tone, set_edges
from studio.audio.measure import LevelMeter, measure_array, measure_blocks, measure_file, true_peak
from studio.audio.subtitles import Cue, parse_cues, to_srt, to_vtt
from studio.audio.tags import BookMeta, ChapterMark, Track
from studio.core.errors import StudioError

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


@pytest.mark.parametrize("fmt", ["wav", "mp3", "m4b"])
def test_measurements_agree_with_ffmpeg(tmp_path: Path, fmt: str) -> None:
    x = speechlike()
    path = write_delivery(tmp_path / f"s.{fmt}", x, SR, fmt, META, Track("s"))
    agree_with_ffmpeg(path)


def test_streaming_meter_matches_whole_signal_and_pyloudnorm() -> None:
    x = speechlike(9.0, seed=5)
    whole = measure_array(x, SR)
    cuts = [0, 1, 4410, 4411, 30000, 100_003, 222_222, x.size]
    pieces = measure_blocks([x[a:b] for a, b in zip(cuts, cuts[1:])], SR)
    for name in ("rms_db", "peak_db", "noise_floor_db", "lufs", "head_s", "tail_s"):
        assert getattr(pieces, name) == pytest.approx(getattr(whole, name), abs=1e-6), name
    assert pieces.true_peak_db == pytest.approx(whole.true_peak_db, abs=0.01)
    assert whole.lufs == pytest.approx(pyloudnorm.Meter(SR).integrated_loudness(x.astype(np.float64)), abs=0.01)
    # an inter-sample peak: a sine at fs/4 sampled at 45 degrees reads 3 dB low on samples
    t = np.arange(4000)
    fade = np.minimum(1.0, np.minimum(t, t[::-1]) / 400)  # no clicks at the ends to ring
    s = (0.5 * fade * np.sin(np.pi / 2 * t + np.pi / 4)).astype(np.float32)
    assert 20 * np.log10(np.abs(s).max()) == pytest.approx(20 * np.log10(0.5) - 3.01, abs=0.05)
    assert 20 * np.log10(true_peak(s)) == pytest.approx(20 * np.log10(0.5), abs=0.1)
    assert LevelMeter(SR).result().rms_db == -120.0  # nothing fed: silence, not an error


def test_too_loud_file_fails_with_the_reason_and_the_master_passes(tmp_path: Path) -> None:
    loud = np.clip(speechlike(level=1.4), -1.0, 1.0)  # clipped at full scale, no room tone at the edges
    hot = write_delivery(tmp_path / "hot.mp3", loud, SR, "mp3", META, Track("hot"))
    report = check_file(hot)
    assert not report.passed
    failed = {c.name for c in report.checks if c.ok is False}
    assert {"RMS", "peak", "head"} <= failed
    rms, peak = (next(c for c in report.checks if c.name == n) for n in ("RMS", "peak"))
    assert float(rms.value.split()[0]) > -18 and float(peak.value.split()[0]) > -3
    assert any(r.startswith("RMS ") and "-23 to -18 dB" in r for r in report.reasons)
    assert any(r.startswith("peak ") and "at most -3 dBFS" in r for r in report.reasons)

    fixed = master(loud, SR)
    good = write_delivery(tmp_path / "mastered.mp3", fixed.audio, SR, "mp3", META, Track("ok"))
    report = check_file(good)
    assert report.passed, report.text()
    assert abs(report.levels.rms_db - (-20.0)) < 1.0 and report.levels.true_peak_db <= -3.0
    assert abs(report.levels.head_s - 0.75) < 0.02 and abs(report.levels.tail_s - 2.0) < 0.02
    agree_with_ffmpeg(good)  # the check's figures are ffmpeg's figures


def test_a_quiet_file_and_loud_room_tone_fail_with_their_reasons(tmp_path: Path) -> None:
    quiet = speechlike(level=0.02)  # -40 dB speech: too quiet for a store
    path = write_delivery(tmp_path / "quiet.flac", quiet, SR, "flac", META, Track("q"))
    report = check_file(path)
    assert "RMS" in {c.name for c in report.checks if c.ok is False}
    assert next(c for c in report.checks if c.name == "encoding").ok is None  # ACX takes MP3 only
    noisy = speechlike(level=0.3) + room_tone(int(12 * SR), -50.0, seed=9)
    loudnoise = write_delivery(tmp_path / "noisy.wav", noisy, SR, "wav", META, Track("n"))
    assert "noise floor" in {c.name for c in check_file(loudnoise).checks if c.ok is False}


def test_mastering_steps() -> None:
    x = np.concatenate([np.zeros(SR * 3), speechlike(4.0, sr=22050)[: 22050 * 3], np.zeros(100)]).astype(np.float32)
    edged, shift = set_edges(x, 22050, 0.6, 1.5)
    lv = measure_array(edged, 22050)
    assert abs(lv.head_s - 0.6) < 0.015 and abs(lv.tail_s - 1.5) < 0.015
    assert shift == pytest.approx(0.6 - measure_array(x, 22050).head_s, abs=0.011)

    limited = limit(speechlike(level=2.0), SR, -6.0)
    assert 20 * np.log10(true_peak(limited)) <= -6.0 + 0.05
    done = master(speechlike(3.0, level=0.05, sr=22050), 22050, MasteringConfig(target_rms_db=-22, room_tone_db=-75))
    assert done.sample_rate == SR
    lv = measure_array(done.audio, SR)
    assert abs(lv.rms_db + 22) < 0.5 and lv.true_peak_db <= -3.4
    assert -76 < lv.noise_floor_db < -74
    for bad in ({"target_rms_db": -17}, {"head_s": 2}, {"tail_s": 0.5}, {"room_tone_db": -40}):
        with pytest.raises(StudioError):
            MasteringConfig(**bad)


def test_subtitle_text_round_trips() -> None:
    cues = [Cue(0.75, 1.2, "Morning"), Cue(3601.5, 3603.25, "Late,  very late.")]
    srt, vtt = to_srt(cues), to_vtt(cues)
    assert "1\n00:00:00,750 --> 00:00:01,200\nMorning\n" in srt
    assert "01:00:01,500 --> 01:00:03,250" in srt
    assert vtt.startswith("WEBVTT\n\n00:00:00.750 --> 00:00:01.200\nMorning\n")
    assert parse_cues(srt) == parse_cues(vtt) == [(0.75, 1.2, "Morning"), (3601.5, 3603.25, "Late,  very late.")]


def test_ffmetadata_escapes_and_counts_in_milliseconds() -> None:
    doc = ffmetadata(BookMeta("A=B; #1\\x", "Me"), [ChapterMark("One", 0, 1.2344), ChapterMark("Two", 1.2344, 9.0)])
    assert doc.splitlines()[:3] == [";FFMETADATA1", "title=A\\=B\\; \\#1\\\\x", "artist=Me"]
    assert doc.count("TIMEBASE=1/1000") == 2 and "START=1234\nEND=9000\ntitle=Two" in doc
