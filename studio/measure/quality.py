"""Quality of accelerated audio against an FP32 reference, in numpy only.

Three things decide whether a faster preset is acceptable:

* **log-mel correlation** - does it still say the same thing the same way?
  STFT 1024/256 (Hann), 80 mel bands, natural log, Pearson correlation over the frames
  both signals have (the shorter length wins, so a length change is reported separately).
* **duration difference** - a quantized text encoder / duration predictor moves phoneme
  durations; that shows up here (samples and percent of the reference).
* **noise floor in pauses** - the classic INT8 failure of a vocoder is hiss where there
  should be silence. Pauses come from the model's own alignment (samples per phoneme id):
  the ids of ``,`` (anywhere) and ``.``, ``;``, ``:`` in mid-sentence, plus the PAD / space
  ids that follow them, give the pause spans. Inside each span the quietest 50 ms window is
  found (RMS in dBFS, full scale = 1.0); the floor of a sentence is the *loudest* of those
  minima (worst case over its pauses). FP32 measures about -96 dBFS on the bundled voice.
  When comparing against a reference, only pauses the reference really renders as
  silence count (its quietest window below ``SILENT_PAUSE_DBFS``): a short mid-sentence
  ``.`` the model glides over ("Certainly. Was it...") is speech, not a pause, and would
  otherwise report the speech level (about -59 dBFS) for FP32 and INT8 alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

#: STFT / mel parameters of the correlation metric.
N_FFT = 1024
HOP = 256
N_MELS = 80
#: length of the window whose RMS defines the noise floor inside a pause.
FLOOR_WINDOW_S = 0.050
#: a reference pause counts as silent (and so measures the test's hiss) below this level.
SILENT_PAUSE_DBFS = -80.0
#: floor reported for an exactly silent window (log of zero).
DIGITAL_SILENCE_DBFS = -200.0

_MEL_CACHE: dict[tuple[int, int, int], np.ndarray] = {}


# ---------------------------------------------------------------------------- log-mel


def _hz_to_mel(hz: np.ndarray | float) -> np.ndarray:
    return 2595.0 * np.log10(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


def _mel_to_hz(mel: np.ndarray | float) -> np.ndarray:
    return 700.0 * (10.0 ** (np.asarray(mel, dtype=np.float64) / 2595.0) - 1.0)


def mel_filterbank(sample_rate: int, n_fft: int = N_FFT, n_mels: int = N_MELS) -> np.ndarray:
    """Triangular HTK-scale filters, shape ``(n_mels, n_fft // 2 + 1)``, 0 Hz .. Nyquist."""
    key = (sample_rate, n_fft, n_mels)
    fb = _MEL_CACHE.get(key)
    if fb is not None:
        return fb
    freqs = np.linspace(0.0, sample_rate / 2.0, n_fft // 2 + 1)
    edges = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(sample_rate / 2.0), n_mels + 2))
    fb = np.zeros((n_mels, freqs.size), dtype=np.float64)
    for m in range(n_mels):
        lo, mid, hi = edges[m], edges[m + 1], edges[m + 2]
        rising = (freqs - lo) / max(mid - lo, 1e-9)
        falling = (hi - freqs) / max(hi - mid, 1e-9)
        fb[m] = np.maximum(0.0, np.minimum(rising, falling))
    _MEL_CACHE[key] = fb
    return fb


def log_mel_spectrogram(
    audio: np.ndarray,
    sample_rate: int,
    n_fft: int = N_FFT,
    hop: int = HOP,
    n_mels: int = N_MELS,
    floor: float = 1e-5,
) -> np.ndarray:
    """``log(max(mel_power, floor))`` of mono audio, shape ``(frames, n_mels)``.

    Frames are centred (reflect padding by ``n_fft // 2``), so ``frames = len // hop + 1``.
    """
    x = np.asarray(audio, dtype=np.float64).reshape(-1)
    pad = n_fft // 2
    if x.size == 0:
        return np.zeros((0, n_mels))
    mode = "reflect" if x.size > pad else "constant"
    x = np.pad(x, pad, mode=mode)
    n_frames = 1 + (x.size - n_fft) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(n_frames)[:, None]
    frames = x[idx] * np.hanning(n_fft + 1)[:-1][None, :]
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    mel = power @ mel_filterbank(sample_rate, n_fft, n_mels).T
    return np.log(np.maximum(mel, floor))


def log_mel_correlation(reference: np.ndarray, test: np.ndarray, sample_rate: int) -> float:
    """Pearson correlation of the two log-mel spectrograms over their common frames."""
    a = log_mel_spectrogram(reference, sample_rate)
    b = log_mel_spectrogram(test, sample_rate)
    n = min(len(a), len(b))
    if n == 0:
        return float("nan")
    a = a[:n].reshape(-1)
    b = b[:n].reshape(-1)
    a = a - a.mean()
    b = b - b.mean()
    denom = math.sqrt(float(a @ a) * float(b @ b))
    if denom == 0.0:
        return 1.0 if np.array_equal(a, b) else 0.0
    return float(a @ b) / denom


# ---------------------------------------------------------------------------- duration


def duration_difference(reference_samples: int, test_samples: int) -> tuple[int, float]:
    """``(test - reference)`` in samples and in percent of the reference."""
    diff = int(test_samples) - int(reference_samples)
    pct = 100.0 * diff / reference_samples if reference_samples else 0.0
    return diff, pct


# ---------------------------------------------------------------------------- pauses


@dataclass(frozen=True)
class PauseIds:
    """Which phoneme ids open a pause, and which ids continue it.

    ``anywhere``: ids that are a pause wherever they stand (``,``).
    ``mid_sentence``: ids that are a pause only when speech follows (``.``, ``;``, ``:``).
    ``gap``: PAD / word-space ids that extend a pause.
    ``end``: end-of-sentence ids (never speech).
    """

    anywhere: frozenset[int]
    mid_sentence: frozenset[int]
    gap: frozenset[int]
    end: frozenset[int]

    @classmethod
    def from_id_map(cls, id_map: Mapping[str, Sequence[int]]) -> "PauseIds":
        """From a Piper ``phoneme_id_map`` (``"_"`` PAD, ``" "`` space, ``"$"`` EOS)."""

        def ids(*symbols: str) -> frozenset[int]:
            return frozenset(i for s in symbols for i in id_map.get(s, ()))

        return cls(
            anywhere=ids(","),
            mid_sentence=ids(".", ";", ":"),
            gap=ids("_", " "),
            end=ids("$"),
        )


def pause_spans(
    phoneme_ids: Sequence[int],
    id_samples: Sequence[int],
    pause_ids: PauseIds,
) -> list[tuple[int, int]]:
    """Sample spans ``[start, end)`` of the pauses of one sentence.

    ``id_samples[i]`` is the number of audio samples the model gave ``phoneme_ids[i]``
    (Piper's alignment output times the hop length).
    """
    ids = list(phoneme_ids)
    samples = np.asarray(id_samples, dtype=np.int64).reshape(-1)
    if len(ids) != samples.size:
        raise ValueError(f"{len(ids)} phoneme ids but {samples.size} duration entries")
    starts = np.concatenate([[0], np.cumsum(samples)])
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(ids):
        pid = ids[i]
        if pid in pause_ids.anywhere or pid in pause_ids.mid_sentence:
            j = i + 1
            while j < len(ids) and ids[j] in pause_ids.gap:
                j += 1
            speech_follows = j < len(ids) and ids[j] not in pause_ids.end
            if pid in pause_ids.anywhere or speech_follows:
                if starts[j] > starts[i]:
                    spans.append((int(starts[i]), int(starts[j])))
            i = j
            continue
        i += 1
    return spans


def _dbfs(rms: float) -> float:
    return 20.0 * math.log10(rms) if rms > 0.0 else DIGITAL_SILENCE_DBFS


def quietest_window_dbfs(segment: np.ndarray, window: int) -> float:
    """RMS level (dBFS) of the quietest ``window``-sample stretch of ``segment``."""
    x = np.asarray(segment, dtype=np.float64).reshape(-1)
    if x.size == 0:
        raise ValueError("empty segment")
    window = max(1, min(window, x.size))
    energy = np.concatenate([[0.0], np.cumsum(x * x)])
    sums = energy[window:] - energy[:-window]
    mean_sq = max(float(sums.min()) / window, 0.0)
    return _dbfs(math.sqrt(mean_sq))


def noise_floor_dbfs(
    audio: np.ndarray,
    spans: Iterable[tuple[int, int]],
    sample_rate: int,
    window_s: float = FLOOR_WINDOW_S,
) -> float | None:
    """Worst case (loudest) of the quietest-window levels over ``spans``.

    Spans shorter than the window are skipped (they are mostly the decoder's smear of the
    neighbouring speech, not a pause). ``None`` when no span is long enough.
    """
    x = np.asarray(audio).reshape(-1)
    window = max(1, int(round(window_s * sample_rate)))
    levels = []
    for start, end in spans:
        start, end = max(0, int(start)), min(x.size, int(end))
        if end - start >= window:
            levels.append(quietest_window_dbfs(x[start:end], window))
    return max(levels) if levels else None


# ---------------------------------------------------------------------------- report


@dataclass(frozen=True)
class QualityReport:
    """One test rendering (or a set of them) against its FP32 reference.

    For a set (``summarize``): ``logmel_corr`` is the lowest item correlation,
    ``logmel_corr_mean`` the mean, durations are totals, noise floors the worst item.
    """

    logmel_corr: float
    logmel_corr_mean: float
    reference_samples: int
    test_samples: int
    duration_diff_samples: int
    duration_diff_pct: float
    max_abs_item_diff_samples: int
    noise_floor_dbfs: float | None
    reference_noise_floor_dbfs: float | None
    pauses: int
    items: int = 1
    #: pause spans left out because the reference is not silent there (or too short)
    pauses_skipped: int = 0

    @property
    def identical_durations(self) -> bool:
        return self.max_abs_item_diff_samples == 0

    def format(self) -> str:
        def db(v: float | None) -> str:
            return "n/a" if v is None else f"{v:.1f} dBFS"

        return (
            f"log-mel corr min {self.logmel_corr:.4f} (mean {self.logmel_corr_mean:.4f}); "
            f"duration diff {self.duration_diff_samples:+d} samples "
            f"({self.duration_diff_pct:+.3f}%), worst item {self.max_abs_item_diff_samples}; "
            f"pause noise floor {db(self.noise_floor_dbfs)} "
            f"(reference {db(self.reference_noise_floor_dbfs)}, {self.pauses} pauses, "
            f"{self.pauses_skipped} skipped, {self.items} items)"
        )


def compare(
    reference: np.ndarray,
    test: np.ndarray,
    sample_rate: int,
    spans: Sequence[tuple[int, int]] = (),
    test_spans: Sequence[tuple[int, int]] | None = None,
    silent_below_dbfs: float | None = SILENT_PAUSE_DBFS,
) -> QualityReport:
    """Compare one test rendering to its reference.

    ``spans`` are the pause spans of the reference; ``test_spans`` those of the test
    audio (default: the same spans, right when durations are identical). Pause ``k``
    counts only if the reference's quietest window in ``spans[k]`` is below
    ``silent_below_dbfs`` (None: every pause long enough counts).
    """
    ref = np.asarray(reference, dtype=np.float32).reshape(-1)
    tst = np.asarray(test, dtype=np.float32).reshape(-1)
    spans = list(spans)
    test_spans = spans if test_spans is None else list(test_spans)
    if len(test_spans) != len(spans):
        raise ValueError(f"{len(spans)} reference pauses but {len(test_spans)} test pauses")
    window = max(1, int(round(FLOOR_WINDOW_S * sample_rate)))
    ref_levels: list[float] = []
    used: list[tuple[int, int]] = []
    for (rs, re_), ts in zip(spans, test_spans):
        rs, re_ = max(0, int(rs)), min(ref.size, int(re_))
        if re_ - rs < window or ts[1] - ts[0] < window:
            continue
        level = quietest_window_dbfs(ref[rs:re_], window)
        if silent_below_dbfs is not None and level >= silent_below_dbfs:
            continue
        ref_levels.append(level)
        used.append(ts)
    corr = log_mel_correlation(ref, tst, sample_rate)
    diff, pct = duration_difference(ref.size, tst.size)
    return QualityReport(
        logmel_corr=corr,
        logmel_corr_mean=corr,
        reference_samples=int(ref.size),
        test_samples=int(tst.size),
        duration_diff_samples=diff,
        duration_diff_pct=pct,
        max_abs_item_diff_samples=abs(diff),
        noise_floor_dbfs=noise_floor_dbfs(tst, used, sample_rate),
        reference_noise_floor_dbfs=max(ref_levels) if ref_levels else None,
        pauses=len(used),
        pauses_skipped=len(spans) - len(used),
    )


def _worst(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def summarize(reports: Sequence[QualityReport]) -> QualityReport:
    """Aggregate item reports: worst correlation, total durations, worst noise floor."""
    if not reports:
        raise ValueError("no reports to summarize")
    ref = sum(r.reference_samples for r in reports)
    tst = sum(r.test_samples for r in reports)
    diff, pct = duration_difference(ref, tst)
    n = sum(r.items for r in reports)
    return QualityReport(
        logmel_corr=min(r.logmel_corr for r in reports),
        logmel_corr_mean=sum(r.logmel_corr_mean * r.items for r in reports) / n,
        reference_samples=ref,
        test_samples=tst,
        duration_diff_samples=diff,
        duration_diff_pct=pct,
        max_abs_item_diff_samples=max(r.max_abs_item_diff_samples for r in reports),
        noise_floor_dbfs=_worst(r.noise_floor_dbfs for r in reports),
        reference_noise_floor_dbfs=_worst(r.reference_noise_floor_dbfs for r in reports),
        pauses=sum(r.pauses for r in reports),
        items=n,
        pauses_skipped=sum(r.pauses_skipped for r in reports),
    )
