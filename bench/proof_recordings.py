"""``--audio/--text`` on the evaluation set's clean sentences (``python bench/proof.py --recordings``).

Why apart from ``bench/proof.py``: the recordings are built from the set's renders and checked the
way a producer checks a narrator's file, a path of its own.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from proof import load_average, proof_items
from proof_set import SOURCES


def recordings(items: list[dict], audio_file: Path, seed: int, part: str = "held") -> None:
    """``--audio/--text`` on a half's clean sentences (``--part``): one recording per kind of prose.

    Each recording starts with a heading ("Chapter one.") and a 2.5 s pause, then the
    sentences with the voice's gaps (0.25 s, and 0.6 s after every fifth sentence).
    Each is checked twice: found by listening, and cut at its subtitles (the studio's
    own cues, :func:`studio.audio.subtitles.cues_from_spans` of where each sentence was laid).
    """
    import tempfile
    import wave

    from studio.audio.assemble import Span
    from studio.audio.pcm import to_int16
    from studio.audio.subtitles import cues_from_spans
    from studio.proof.check import Checker
    from studio.proof.recording import proof_recording

    proof = proof_items(items, audio_file, seed, new=False)
    rate = proof[0].rate
    checker = Checker.open()
    # flagged, cut, total, seconds; "subtitles, own render": judged as the studio's own (what --subtitles does)
    counts = {"listening": [0, 0, 0, 0.0], "subtitles": [0, 0, 0, 0.0], "subtitles, own render": [0, 0, 0, 0.0]}
    seconds = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for n, source in enumerate(SOURCES, 1):
            chosen = [i for i, it in enumerate(items) if it["part"] == part and it["kind"] == "clean"
                      and it["source"] == source]
            texts = [f"Chapter {n}."] + [items[i]["text"] for i in chosen]
            title = _heading(texts[0])
            parts = [np.zeros(int(0.4 * rate), np.float32)]
            spans, at = [], parts[0].size
            for k, audio in enumerate([title] + [proof[i].audio for i in chosen]):
                gap = 2.5 if k == 0 else (0.6 if k % 5 == 0 else 0.25)
                parts += [audio, np.zeros(int(gap * rate), np.float32)]
                spans.append(Span(at, at + audio.size, texts[k]))
                at += audio.size + int(gap * rate)
            path = Path(tmp) / f"{source}.wav"
            audio = np.concatenate(parts)
            seconds += audio.size / rate
            with wave.open(str(path), "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(rate)
                w.writeframes(to_int16(audio).tobytes())
            cues = [(c.start, c.end, c.text) for c in cues_from_spans(audio, rate, spans, rate)]
            for how, given in (("listening", None), ("subtitles", cues), ("subtitles, own render", cues)):
                started = time.monotonic()
                verdicts = proof_recording(checker, path, texts, "en", given, own_render=how.endswith("own render"))
                body = verdicts[1:]
                bad = [v for v in body if v.record.needs_listening]
                c = counts[how]
                c[0] += len(bad)
                c[1] += sum(any(f.kind == "cut" for f in v.record.flags) for v in body[:-1])
                c[2] += len(body)
                c[3] += time.monotonic() - started
                print(f"--audio {source} ({how}): {len(bad)} of {len(body)} clean sentences flagged"
                      + "".join(f"\n    {v.record.reasons} | {v.text[:70]!r} | heard {v.record.heard[:60]!r}"
                                for v in bad), flush=True)
    for how, (flagged, cut, total, wall) in counts.items():
        print(f"--audio overall ({how}): {flagged} of {total} clean sentences flagged ({flagged / total:.1%}); "
              f"'cut short' at inner sentence ends: {cut}; {seconds:.0f} s of audio in {wall:.0f} s "
              f"({seconds / wall:.1f}x real time); load average {load_average()}")


def _heading(text: str) -> np.ndarray:
    from studio.engine.base import SynthesisSettings
    from studio.engine.presets import DEFAULT_PRESET, open_preset
    from studio.engine.voice.catalog import get_voice
    from studio.rendering.synthesizer import SynthRequest, each_synthesizer

    engine = open_preset(DEFAULT_PRESET, get_voice(None))
    engine.load()
    (audio,) = each_synthesizer(engine, SynthesisSettings())([SynthRequest(0, text, "en")])
    return np.asarray(audio, np.float32)
