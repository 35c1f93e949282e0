"""Mastering, measurement and the ACX check on generated signals, cross-checked
against ffmpeg's own ``astats`` and ``ebur128`` filters (real ffmpeg, real files)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyloudnorm
import pytest

from studio.audio.acx import check_file
from studio.audio.containers import ffmetadata, write_delivery
from studio.audio.mastering import MasteringConfig, limit, master, room_tone, set_edges
from studio.audio.measure import LevelMeter, measure_array, measure_blocks, true_peak
from studio.audio.subtitles import Cue, parse_cues, to_srt, to_vtt
from studio.audio.tags import BookMeta, ChapterMark, Track
from studio.core.errors import StudioError
from support.audio import META, SR, agree_with_ffmpeg, speechlike


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
