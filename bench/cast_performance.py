"""Performances of the narrator's voice: which library shifts pitch and pace best.

Run ``python bench/cast_performance.py`` (``--render``: the render speed of a cast
chapter against the same chapter in one voice). Renders a few sentences with the bundled
voice (noise off, so every candidate gets the same input), then asks each candidate
for pitch shifts of -3, +2 and +3 semitones and a pace of 0.9x, and prints per
candidate: the median F0 shift measured on its output (Praat's pitch track; librosa's pYIN
beside it) against the shift asked, log-mel correlation of a +3 then -3 round
trip against the plain voice (what the processing itself damages), log-mel
correlation of the +3 output against the plain voice (how far the timbre moves),
the clicks (largest sample step at the first and last 5 ms, against the median
step), and the seconds of processing per second of audio.

Candidates: pedalboard's PitchShift/time_stretch (Rubber Band inside), Praat's PSOLA
("Change gender" with formants kept) through praat-parselmouth, WORLD through
pyworld, and the voice's own scales (pace only: a VITS voice has no pitch input).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from studio.measure.quality import log_mel_correlation  # noqa: E402
from studio.engine.base import SynthesisSettings  # noqa: E402

SENTENCES = [
    "The lamp was lit, and the sea was calm under a long white moon.",
    "Where are you going at this hour of the night, my friend?",
    "I shall be back before the morning, he said, and closed the door.",
    "Nothing in the world is so quiet as a harbour after the storm.",
]
SHIFTS = (-3.0, 2.0, 3.0)
PACE = 0.9
Shift = Callable[[np.ndarray, int, float, float], np.ndarray]  # audio, rate, semitones, pace


def pedalboard_shift(audio: np.ndarray, rate: int, semitones: float, pace: float) -> np.ndarray:
    import pedalboard

    return pedalboard.time_stretch(audio.astype(np.float32)[None, :], rate, stretch_factor=pace,
                                   pitch_shift_in_semitones=semitones)[0]


def praat_shift(audio: np.ndarray, rate: int, semitones: float, pace: float) -> np.ndarray:
    import parselmouth
    from parselmouth.praat import call

    sound = parselmouth.Sound(audio.astype(np.float64), sampling_frequency=rate)
    pitch = call(sound, "To Pitch", 0.0, 75, 600)
    median = call(pitch, "Get quantile", 0, 0, 0.5, "Hertz")
    out = call(sound, "Change gender", 75, 600, 1.0, median * 2 ** (semitones / 12), 1.0, 1.0 / pace)
    return out.values[0].astype(np.float32)


def world_shift(audio: np.ndarray, rate: int, semitones: float, pace: float) -> np.ndarray:
    import pyworld

    x = audio.astype(np.float64)
    f0, t = pyworld.harvest(x, rate, frame_period=5.0)
    sp = pyworld.cheaptrick(x, f0, t, rate)
    ap = pyworld.d4c(x, f0, t, rate)
    f0 = f0 * 2 ** (semitones / 12)
    if pace != 1.0:
        n = max(1, int(round(len(f0) / pace)))
        idx = np.minimum((np.arange(n) * pace).astype(int), len(f0) - 1)
        f0, sp, ap = f0[idx], sp[idx], ap[idx]
    return pyworld.synthesize(f0, np.ascontiguousarray(sp), np.ascontiguousarray(ap), rate, 5.0).astype(np.float32)


def median_f0(audio: np.ndarray, rate: int) -> float:
    """Median F0 by Praat's autocorrelation pitch (the phonetics standard; PSOLA's synthesis is another step)."""
    import parselmouth
    from parselmouth.praat import call

    pitch = call(parselmouth.Sound(audio.astype(np.float64), sampling_frequency=rate), "To Pitch", 0.0, 50, 500)
    return float(call(pitch, "Get quantile", 0, 0, 0.5, "Hertz"))


def median_f0_pyin(audio: np.ndarray, rate: int) -> float:
    """The cross-check: librosa's pYIN (it errs low on this 90 Hz voice: octave and floor misses)."""
    import librosa

    f0, voiced, _ = librosa.pyin(audio.astype(np.float32), fmin=60, fmax=500, sr=rate, frame_length=1024)
    f0 = f0[voiced & np.isfinite(f0)]
    return float(np.median(f0)) if f0.size else float("nan")


def click_ratio(audio: np.ndarray, rate: int) -> float:
    """Largest sample step in the first and last 5 ms over the median step of the whole clip."""
    steps = np.abs(np.diff(audio))
    edge = int(0.005 * rate)
    worst = max(steps[:edge].max(initial=0.0), steps[-edge:].max(initial=0.0))
    return float(worst / (np.median(steps) + 1e-9))


def render_speed() -> None:
    """A cast chapter (Pride and Prejudice, chapter 1: two voices a performance each) against
    the same chapter in one voice: fresh projects, the same engine, wall time of the render."""
    import tempfile
    from dataclasses import replace

    from studio.engine.presets import open_preset
    from studio.engine.voice.catalog import get_voice
    from studio.rendering.render import render_project
    from studio.project.opening import new_project_settings, open_for_manuscript
    from studio.project.cast import Casting, Performance

    text = (Path(__file__).resolve().parent / "cast_data" / "pride-and-prejudice-ch1.txt").read_text(encoding="utf-8")
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("#"))
    engine = open_preset("fp32-cpu", get_voice(None))
    engine.load()
    with tempfile.TemporaryDirectory() as tmp:
        ms = Path(tmp) / "chapter.md"
        ms.write_text("# Chapter 1\n\n" + body, encoding="utf-8")
        settings = new_project_settings(get_voice(None))
        settings = replace(settings, synthesis=replace(settings.synthesis, noise_scale=0.0, noise_w=0.0))
        engine.synthesize("Warm up.", "en", settings.synthesis)
        for cast in (False, True):
            project = open_for_manuscript(ms, Path(tmp) / f"p{int(cast)}.studio", settings).project
            if cast:
                project.cast.set_enabled(True)
                project.cast.merge("Mrs. Bennet", "his lady")
                project.cast.merge("Mrs. Bennet", "his wife")
                project.cast.analyse()
                project.cast.set_casting("Mrs. Bennet", Casting(performance=Performance(pitch=3.0)))
                project.cast.set_casting("Mr. Bennet", Casting(performance=Performance(pitch=-2.0, pace=0.95)))
            t0 = time.perf_counter()
            done = render_project(project, engine, batch_size=8)
            took = time.perf_counter() - t0
            parts = sum(max(1, len(r.cast)) for r in project.sentences())
            print(f"{'cast' if cast else 'one voice':10} {done.total} sentences ({parts} parts), "
                  f"{done.audio_seconds:.1f} s of audio in {took:.1f} s: {done.audio_seconds / took:.2f}x real time")
            project.close()


def main() -> int:
    if "--render" in sys.argv:
        render_speed()
        return 0
    from studio.engine.presets import open_preset
    from studio.engine.voice.catalog import get_voice

    engine = open_preset("fp32-cpu", get_voice(None))
    engine.load()
    plain_settings = SynthesisSettings(noise_scale=0.0, noise_w=0.0)
    rate = engine.sample_rate
    clips = [engine.synthesize(s, "en", plain_settings) for s in SENTENCES]
    audio_s = sum(len(c) for c in clips) / rate
    base_f0 = [median_f0(c, rate) for c in clips]
    base_pyin = [median_f0_pyin(c, rate) for c in clips]
    print(f"{len(clips)} sentences, {audio_s:.1f} s of audio at {rate} Hz; plain median F0 "
          f"{np.nanmedian(base_f0):.1f} Hz")
    candidates: dict[str, Shift] = {"pedalboard (Rubber Band)": pedalboard_shift,
                                    "parselmouth (Praat PSOLA)": praat_shift, "pyworld (WORLD)": world_shift}
    print(f"{'candidate':28} {'asked':>6} {'measured':>9} {'error':>6} {'pYIN':>6} {'roundtrip':>9} {'vs plain':>8} "
          f"{'clicks':>6} {'s/s audio':>9}")
    for name, fn in candidates.items():
        for semis in SHIFTS:
            t0 = time.perf_counter()
            out = [fn(c, rate, semis, 1.0) for c in clips]
            took = time.perf_counter() - t0
            measured = np.nanmedian([12 * np.log2(median_f0(o, rate) / b) for o, b in zip(out, base_f0)])
            pyin = np.nanmedian([12 * np.log2(median_f0_pyin(o, rate) / b) for o, b in zip(out, base_pyin)])
            round_trip = np.mean([log_mel_correlation(c, fn(o, rate, -semis, 1.0), rate)
                                  for c, o in zip(clips, out)]) if semis == 3.0 else float("nan")
            vs_plain = np.mean([log_mel_correlation(c, o, rate) for c, o in zip(clips, out)])
            clicks = max(click_ratio(o, rate) for o in out)
            print(f"{name:28} {semis:+6.1f} {measured:+9.2f} {measured - semis:+6.2f} {pyin:+6.2f} {round_trip:9.3f} "
                  f"{vs_plain:8.3f} {clicks:6.1f} {took / audio_s:9.3f}")
        t0 = time.perf_counter()
        out = [fn(c, rate, 0.0, PACE) for c in clips]
        took = time.perf_counter() - t0
        ratio = sum(len(o) for o in out) / sum(len(c) for c in clips)
        print(f"{name:28} pace {PACE}: length x{ratio:.3f} (asked x{1 / PACE:.3f}), {took / audio_s:.3f} s/s audio")
    t0 = time.perf_counter()
    slow = [engine.synthesize(s, "en", SynthesisSettings(noise_scale=0.0, noise_w=0.0, length_scale=1 / PACE))
            for s in SENTENCES]
    took = time.perf_counter() - t0
    ratio = sum(len(o) for o in slow) / sum(len(c) for c in clips)
    drift = np.nanmedian([12 * np.log2(median_f0(o, rate) / b) for o, b in zip(slow, base_f0)])
    print(f"{'voice scales (length_scale)':28} pace {PACE}: length x{ratio:.3f} (asked x{1 / PACE:.3f}), "
          f"F0 moved {drift:+.2f} st, synthesis {took / audio_s:.3f} s/s audio (no extra step)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
