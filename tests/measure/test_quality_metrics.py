"""The quality metrics themselves, on synthetic signals with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from studio.measure import quality as Q

SR = 22050
ID_MAP = {"_": [0], "^": [1], "$": [2], " ": [3], ",": [8], ".": [10], ";": [12], ":": [11], "a": [14], "b": [15]}


def _tone(seconds: float, freq: float = 220.0, amp: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _with_gaps(gap_fill) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """tone 0.3 s | gap 0.2 s | tone 0.3 s | gap 0.2 s | tone 0.3 s, and the gap spans."""
    parts, spans, pos = [], [], 0
    for k in range(3):
        tone = _tone(0.3)
        parts.append(tone)
        pos += tone.size
        if k < 2:
            gap = gap_fill(int(0.2 * SR))
            spans.append((pos, pos + gap.size))
            parts.append(gap)
            pos += gap.size
    return np.concatenate(parts), spans


def test_noise_floor_silent_gaps_vs_noisy_gaps():
    silent, spans = _with_gaps(lambda n: np.zeros(n, dtype=np.float32))
    rng = np.random.default_rng(0)
    noise_rms = 10 ** (-50 / 20)  # -50 dBFS white noise
    noisy, spans2 = _with_gaps(lambda n: (rng.standard_normal(n) * noise_rms).astype(np.float32))
    assert spans == spans2

    floor_silent = Q.noise_floor_dbfs(silent, spans, SR)
    floor_noisy = Q.noise_floor_dbfs(noisy, spans, SR)
    assert floor_silent == Q.DIGITAL_SILENCE_DBFS
    assert floor_noisy == pytest.approx(-50.0, abs=1.5)

    # a tiny floor (FP32-like) is measured, not clamped
    faint, _ = _with_gaps(lambda n: np.full(n, 10 ** (-96 / 20), dtype=np.float32))
    assert Q.noise_floor_dbfs(faint, spans, SR) == pytest.approx(-96.0, abs=0.1)

    # the tone itself is loud: a "pause" span over it reports the tone level (-9 dBFS)
    assert Q.noise_floor_dbfs(silent, [(0, int(0.3 * SR))], SR) == pytest.approx(-9.03, abs=0.2)


def test_noise_floor_is_worst_pause_and_quietest_window():
    x = np.zeros(SR, dtype=np.float32)
    x[1000:3000] = 0.01  # -40 dBFS in the first pause, 2000 samples
    x[20000:30000] = 0.001  # second pause: -60 dBFS for its whole length
    spans = [(0, 5000), (20000, 30000)]
    # pause 1: a quiet 50 ms window exists (3000..5000 is 2000 samples >= 1103) -> silence;
    # pause 2 has no quiet window -> -60; worst case = -60
    assert Q.noise_floor_dbfs(x, spans, SR) == pytest.approx(-60.0, abs=0.01)
    # spans shorter than the window are ignored
    assert Q.noise_floor_dbfs(x, [(0, 500)], SR) is None


def test_logmel_correlation_identity_and_difference():
    rng = np.random.default_rng(1)
    sig = np.concatenate([_tone(0.5, 200), _tone(0.5, 900, 0.2), rng.standard_normal(SR // 2).astype(np.float32) * 0.05])
    assert Q.log_mel_correlation(sig, sig, SR) == pytest.approx(1.0, abs=1e-12)
    # a little added noise: still very similar; unrelated noise: not
    noisy = sig + rng.standard_normal(sig.size).astype(np.float32) * 1e-3
    c_noisy = Q.log_mel_correlation(sig, noisy, SR)
    c_other = Q.log_mel_correlation(sig, rng.standard_normal(sig.size).astype(np.float32) * 0.1, SR)
    assert 0.9 < c_noisy < 1.0
    assert c_other < 0.5


def test_logmel_shape():
    mel = Q.log_mel_spectrogram(np.zeros(2560, dtype=np.float32), SR)
    assert mel.shape == (2560 // Q.HOP + 1, Q.N_MELS)
    assert np.all(mel == pytest.approx(math.log(1e-5)))


def test_duration_difference():
    assert Q.duration_difference(1000, 1000) == (0, 0.0)
    assert Q.duration_difference(1000, 1010) == (10, pytest.approx(1.0))
    assert Q.duration_difference(2000, 1990) == (-10, pytest.approx(-0.5))


def test_pause_spans_from_durations():
    pid = Q.PauseIds.from_id_map(ID_MAP)
    #      ^  _  a  _  ,  _  ' ' _  b  _  .  _  ' ' _  a  _  .  _  $
    ids = [1, 0, 14, 0, 8, 0, 3, 0, 15, 0, 10, 0, 3, 0, 14, 0, 10, 0, 2]
    samples = [256] * len(ids)
    spans = Q.pause_spans(ids, samples, pid)
    # ',' at index 4 + gaps 5..7 -> [4*256, 8*256); mid-sentence '.' at 10 + gaps 11..13
    # -> [10*256, 14*256); the final '.' (16) is followed only by PAD and EOS: no pause
    assert spans == [(4 * 256, 8 * 256), (10 * 256, 14 * 256)]
    assert spans[0][1] - spans[0][0] == 1024
    with pytest.raises(ValueError):
        Q.pause_spans(ids, samples[:-1], pid)


def test_compare_and_summarize_count_only_silent_reference_pauses():
    ref, spans = _with_gaps(lambda n: np.zeros(n, dtype=np.float32))
    rng = np.random.default_rng(2)
    test = ref + (rng.standard_normal(ref.size) * 10 ** (-70 / 20)).astype(np.float32)
    rep = Q.compare(ref, test, SR, spans)
    assert rep.pauses == 2 and rep.pauses_skipped == 0
    assert rep.noise_floor_dbfs == pytest.approx(-70.0, abs=1.5)
    assert rep.reference_noise_floor_dbfs == Q.DIGITAL_SILENCE_DBFS
    assert rep.duration_diff_samples == 0 and rep.identical_durations
    assert rep.logmel_corr > 0.9

    # a "pause" that the reference speaks through is not a pause
    loud_span = [(0, int(0.3 * SR))]
    rep2 = Q.compare(ref, test, SR, loud_span)
    assert rep2.pauses == 0 and rep2.pauses_skipped == 1 and rep2.noise_floor_dbfs is None

    longer = np.concatenate([test, np.zeros(100, dtype=np.float32)])
    rep3 = Q.compare(ref, longer, SR, spans)
    assert rep3.duration_diff_samples == 100 and not rep3.identical_durations

    total = Q.summarize([rep, rep2, rep3])
    assert total.items == 3
    assert total.pauses == 4 and total.pauses_skipped == 1
    assert total.duration_diff_samples == 100
    assert total.max_abs_item_diff_samples == 100
    assert total.logmel_corr == min(rep.logmel_corr, rep2.logmel_corr, rep3.logmel_corr)
    assert "dBFS" in total.format()
    with pytest.raises(Exception):
        total.items = 4  # frozen
