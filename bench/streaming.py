"""Time to first audio (TTFA) of chunked streaming vs rendering the whole passage.

    python bench/streaming.py [--first 40,100,300] [--chunk 300] [--reps 3] [--json out.json]

Streams a ~2,000-character paragraph with the bundled voice (ONNX, CPU) and
reports, for each first-chunk size (default 40: cut at a word; 100: the default,
cut at the first comma; 300: no clause cut, the whole first sentence): TTFA (wall and CPU seconds until the first
chunk is yielded), the whole stream's time, the first chunk's text length and
audio length, and whether playback started at TTFA would ever run dry (each chunk
must be ready before the audio before it has finished playing). The baseline is
the same sentences rendered as one piece before anything can play. Target: TTFA
< 0.5 s on CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.engine.base import SynthesisSettings  # noqa: E402
from studio.engine.serving.buffers import BufferPool  # noqa: E402
from studio.engine.presets import open_preset  # noqa: E402
from studio.engine.serving.streaming import stream_passage  # noqa: E402
from studio.text.segment import sentence_bounds  # noqa: E402
from studio.engine.voice.catalog import get_voice  # noqa: E402

PARAGRAPH = (
    "The harbour was quiet when Elena came down the hill, her boots slipping on the wet "
    "cobbles, the morning fog still clinging to the masts of the fishing boats. She had "
    "not slept. All night she had turned the letter over in her mind, reading it again by "
    "the light of the stove, trying to hear her brother's voice behind the careful, "
    "formal words. He was alive; that much was certain. But the rest of it, the talk of "
    "debts and of a ship that would not wait, made no sense to her at all. At the end of "
    "the pier an old man was mending nets, his fingers moving with a speed that seemed "
    "to belong to someone much younger. He looked up as she approached and nodded, as if "
    "he had been expecting her. \"You'll be the sister,\" he said. It was not a question. "
    "Elena stopped a few paces away and held out the letter, but he did not take it. "
    "Instead he pointed across the water, to where a low grey vessel lay at anchor beyond "
    "the breakwater, its single funnel trailing a thin line of smoke into the pale sky. "
    "\"She sails on the evening tide,\" he said, \"with or without him. The captain is not "
    "a patient man, and your brother owes him more than money.\" Elena felt the cold "
    "reach her through her coat. She asked what else her brother could possibly owe, "
    "and the old man smiled for the first time, a slow and not unkind smile. \"A promise,\" "
    "he said. \"He promised to bring back something that was never his to bring.\" Then "
    "he returned to his nets, and no matter how she pressed him, he would say nothing "
    "more. Elena stood there for a long while, watching the grey ship, until the fog "
    "began to lift and the first gulls came wheeling in from the open sea. When at last "
    "she turned back towards the town, the streets had filled with people: women carrying "
    "baskets to the market, boys running errands, a priest hurrying somewhere with his "
    "head down against the wind. None of them looked at her. She thought of the evening "
    "tide, of the grey ship and its impatient captain, and of the promise her brother had "
    "made, and she began, very slowly, to understand what she would have to do."
)


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


def _one_stream(engine, text, settings, first, chunk, pool):
    t0, c0 = time.perf_counter(), time.process_time()
    ready, durations, first_info = [], [], None
    for ch in stream_passage(engine, text, "en", settings, first_chunk_chars=first,
                             chunk_chars=chunk, pool=pool):
        now = time.perf_counter() - t0
        if first_info is None:
            first_info = (now, time.process_time() - c0, len(ch.text.strip()), ch.duration_s)
        ready.append(now)
        durations.append(ch.duration_s)
    total = time.perf_counter() - t0
    # playback starts when chunk 0 is ready; chunk k must be ready before chunk k-1 ends
    play_at, dry = ready[0], 0.0
    for r, d in zip(ready, durations):
        if r > play_at:
            dry += r - play_at
            play_at = r
        play_at += d
    return first_info, total, sum(durations), dry, len(ready)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--first", default="40,100,300")
    ap.add_argument("--chunk", type=int, default=300)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    firsts = [int(x) for x in args.first.split(",")]

    engine = open_preset("fp32-cpu", get_voice(None), device="cpu", threads=args.threads)
    engine.load()
    settings: SynthesisSettings = engine.default_settings
    text = PARAGRAPH
    print(f"# streaming bench: {len(text)} chars, chunk_chars={args.chunk}, cores={os.cpu_count()}, "
          f"loadavg={_loadavg()}", flush=True)
    engine.synthesize("Warm up the session.", "en", settings)
    pool = BufferPool()

    # baseline: every sentence rendered before anything can play
    base = []
    sentences = [text[a:b].strip() for a, b in sentence_bounds(text)]
    for _ in range(args.reps):
        t0 = time.perf_counter()
        for s in sentences:
            engine.synthesize(s, "en", settings)
        base.append(time.perf_counter() - t0)

    results = {f: [] for f in firsts}
    for _ in range(args.reps):
        for f in firsts:
            results[f].append(_one_stream(engine, text, settings, f, args.chunk, pool))

    rows = []
    print(f"{'first':>5} {'chars':>5} {'audio0_s':>8} {'ttfa_s':>7} {'ttfa_med':>8} {'ttfa_cpu':>8} "
          f"{'stream_s':>8} {'chunks':>6} {'dry_s':>6}")
    for f in firsts:
        runs = results[f]
        ttfa = [r[0][0] for r in runs]
        row = dict(first_chunk_chars=f, first_chars=runs[0][0][2], first_audio_s=runs[0][0][3],
                   ttfa_best_s=min(ttfa), ttfa_median_s=statistics.median(ttfa),
                   ttfa_cpu_s=min(r[0][1] for r in runs),
                   stream_total_s=min(r[1] for r in runs), audio_s=runs[0][2],
                   chunks=runs[0][4], playback_dry_s=min(r[3] for r in runs))
        rows.append(row)
        print(f"{f:>5} {row['first_chars']:>5} {row['first_audio_s']:>8.2f} {row['ttfa_best_s']:>7.3f} "
              f"{row['ttfa_median_s']:>8.3f} {row['ttfa_cpu_s']:>8.3f} {row['stream_total_s']:>8.2f} "
              f"{row['chunks']:>6} {row['playback_dry_s']:>6.2f}")
    print(f"# whole passage, sentence by sentence, before any audio: best {min(base):.2f} s "
          f"(median {statistics.median(base):.2f} s) for {rows[0]['audio_s']:.1f} s of audio")
    print(f"# pool: {pool.stats()}")
    print(f"# loadavg after: {_loadavg()}")
    if args.json:
        args.json.write_text(json.dumps(dict(chars=len(text), baseline_best_s=min(base), rows=rows), indent=2))
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
