"""Quality of each preset's audio against the FP32 reference, scored in the parent.

The children only save their noise-0 audio (``<preset>.npz``); scoring happens
here, after every child has exited, so the metrics (:mod:`studio.measure.quality`)
and speech recognition (:mod:`studio.measure.asr`, slow: about real time) never
compete with a timed round for the CPU. Transcripts are cached per (preset,
sentence) so the reference is recognised once, not once per row.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["REFERENCE_PRESET", "Transcripts", "quality_vs_reference"]

REFERENCE_PRESET = "fp32-cpu"


class Transcripts:
    """Speech recognition of reference / test audio, remembered per (label, index)."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self.cache: dict[tuple[str, int], float] = {}
        self.seconds = 0.0
        self.error: str | None = None

    def wer(self, label: str, index: int, text: str, audio: np.ndarray) -> float | None:
        key = (label, index)
        if key not in self.cache:
            if self.error is not None:
                return None
            try:
                from studio.measure.asr import word_error_rate
                from studio.proof.sphinx import transcribe

                t = time.perf_counter()
                self.cache[key] = word_error_rate(text, transcribe(audio, self.sample_rate))
                self.seconds += time.perf_counter() - t
            except ImportError as exc:
                self.error = f"pocketsphinx unavailable: {exc}"
                return None
        return self.cache[key]


def _load_npz(path: Path) -> dict[int, dict[str, np.ndarray]]:
    out: dict[int, dict[str, np.ndarray]] = {}
    with np.load(path) as data:
        for key in data.files:
            out.setdefault(int(key[1:]), {})[key[0]] = data[key]
    return out


def quality_vs_reference(
    name: str,
    work_dir: Path,
    sentences: Sequence[str],
    pause_ids: Any,
    sample_rate: int,
    wer_indices: Sequence[int],
    transcripts: Transcripts | None,
) -> dict[str, Any]:
    """Compare ``<name>.npz`` with the reference's audio, sentence by sentence."""
    from studio.measure import quality as Q

    ref = _load_npz(work_dir / f"{REFERENCE_PRESET}.npz")
    tst = ref if name == REFERENCE_PRESET else _load_npz(work_dir / f"{name}.npz")
    common = sorted(set(ref) & set(tst))
    if not common:
        return {"error": "no sentences to compare"}
    reports = []
    floor_pauses = 0
    for i in common:
        r, t = ref[i], tst[i]
        spans: list[tuple[int, int]] = []
        test_spans = None
        if "s" in r:
            spans = Q.pause_spans(r["i"], r["s"], pause_ids)
            if "s" in t and len(t["s"]) == len(t["i"]):
                test_spans = Q.pause_spans(t["i"], t["s"], pause_ids)
                if len(test_spans) != len(spans):
                    spans, test_spans = [], None
            elif t["a"].size != r["a"].size:
                spans = []  # no alignment and another length: the pauses are elsewhere
        reports.append(Q.compare(r["a"], t["a"], sample_rate, spans, test_spans))
        floor_pauses += reports[-1].pauses
    s = Q.summarize(reports)
    out: dict[str, Any] = {
        "items": len(common),
        "log_mel_correlation": s.logmel_corr,
        "log_mel_correlation_mean": s.logmel_corr_mean,
        "noise_floor_dbfs": s.noise_floor_dbfs,
        "reference_noise_floor_dbfs": s.reference_noise_floor_dbfs,
        "pauses": s.pauses,
        "duration_diff_samples": s.duration_diff_samples,
        "duration_diff_pct": s.duration_diff_pct,
        "max_item_duration_diff_samples": s.max_abs_item_diff_samples,
        "identical_durations": s.identical_durations,
    }
    if transcripts is not None:
        chosen = [i for i in wer_indices if i in common] or common[: max(1, min(len(common), len(wer_indices)))]
        wers, refs = [], []
        for i in chosen:
            w = transcripts.wer(name, i, sentences[i], tst[i]["a"])
            w0 = transcripts.wer(REFERENCE_PRESET, i, sentences[i], ref[i]["a"])
            if w is None or w0 is None:
                break
            wers.append(w)
            refs.append(w0)
        if wers:
            out["wer"] = float(np.mean(wers))
            out["wer_reference"] = float(np.mean(refs))
            out["wer_items"] = len(wers)
        elif transcripts.error:
            out["wer_error"] = transcripts.error
    return out
