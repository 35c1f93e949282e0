"""INT8 recipe levers, one at a time: quality against FP32, CPU time, window size.

    python bench/int8_levers.py quality 'QuantRecipe()' 'QuantRecipe(decoder_stages=(0, 1, 2))'
    python bench/int8_levers.py quality --extra-sentences pauses.txt 'QuantRecipe()'
    python bench/int8_levers.py time 'QuantRecipe()' 'QuantRecipe(smooth_alpha=0.5)'
    python bench/int8_levers.py windows 384 768 0

Each argument of ``quality`` / ``time`` is a :class:`QuantRecipe` expression; builds go to
``--cache-dir`` (default ``/tmp/studio-int8-levers``, not the app's cache), and recipes that
differ only in the nodes they pick share one calibration, so such a variant builds in seconds.

* ``quality``: the first 12 sentences with a comma, semicolon or colon of
  ``bench/cpu_presets.py``'s story, noise 0, against the FP32 voice: log-mel correlation
  (min and mean over sentences), worst pause noise floor, identical durations; PASS when
  inside the INT8 bounds (corr >= 0.99, floor <= -60 dBFS, durations identical).
* ``time`` / ``windows``: long prose (``studio.measure.whole.long_prose``, >= 250 words,
  split into sentences as the app splits them), one thread, one sentence at a time through
  the windowed engine, CPU seconds (``time.process_time``) of each variant in turn, three
  rounds after a warm-up round; medians, min-max, and the per-round ratio to the first
  variant. ``uptime`` is printed with every round: on a shared machine say the load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from cpu_presets import BOOK_TEXT  # noqa: E402
from studio.measure import quality as Q  # noqa: E402
from studio.measure.whole import long_prose  # noqa: E402
from studio.engine.base import SynthesisSettings  # noqa: E402
from studio.engine.onnx.int8 import Int8OnnxEngine  # noqa: E402
from studio.engine.onnx.int8_recipe import QuantRecipe  # noqa: E402
from studio.engine.onnx.piper import OnnxPiperEngine  # noqa: E402
from studio.engine.voice.catalog import get_voice  # noqa: E402
from studio.text.segment import split_sentences  # noqa: E402

SILENT = SynthesisSettings(noise_scale=0.0, length_scale=1.0, noise_w=0.0)


def _recipe(text: str) -> QuantRecipe:
    return eval(text, {"QuantRecipe": QuantRecipe})  # a bench argument, typed by whoever runs it


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def quality(args) -> None:
    voice = get_voice(None)
    sentences = [s for s in BOOK_TEXT.strip().split("\n") if any(c in s for c in ",;:")][:12]
    extra = Path(args.extra_sentences).read_text(encoding="utf-8").splitlines() if args.extra_sentences else None
    fp32 = OnnxPiperEngine(voice.model_path, voice.config_path, threads=1)
    fp32.load()
    pause_ids = Q.PauseIds.from_id_map(fp32.config.phoneme_id_map)
    ids = [fp32.text_to_ids(s, "en") for s in sentences]
    ref = [fp32.synthesize_batch_with_alignments([x], SILENT)[0] for x in ids]
    for spec in args.recipes:
        engine = Int8OnnxEngine(voice.model_path, voice.config_path, threads=1, cache_dir=args.cache_dir,
                                recipe=_recipe(spec), calibration_sentences=extra)
        build = engine.prepare()
        engine.load()
        test = [engine.synthesize_batch_with_alignments([x], SILENT)[0] for x in ids]
        engine.close()
        same = all(np.array_equal(da, db) for (_, da), (_, db) in zip(ref, test))
        total = Q.summarize([Q.compare(a, b, fp32.sample_rate, Q.pause_spans(x, da, pause_ids))
                             for x, (a, da), (b, _) in zip(ids, ref, test)])
        ok = same and total.logmel_corr >= 0.99 and (total.noise_floor_dbfs or -999.0) <= -60.0
        print(f"{spec}: {build.quantized_conv_nodes} INT8 convs; {total.format()}; "
              f"durations {'identical' if same else 'DIFFER'} -> {'PASS' if ok else 'fail'}", flush=True)


def _timed(engines: list, labels: list[str]) -> None:
    text, _ = long_prose(None, min_words=250)
    sentences = [s for p in text.split("\n\n") for s in split_sentences(p)]
    settings = engines[0].default_settings
    ids = [engines[0].text_to_ids(s.text, "en") for s in sentences]

    def run(engine) -> tuple[float, float]:
        t = time.process_time()
        samples = sum(engine.synthesize_batch([x], settings)[0].size for x in ids)
        return time.process_time() - t, samples / engine.sample_rate

    for engine in engines:
        _, speech = run(engine)
    print(f"{len(sentences)} sentences, {speech:.1f} s of speech", flush=True)
    times: dict[str, list[float]] = {label: [] for label in labels}
    for _ in range(3):
        print(_uptime(), flush=True)
        for label, engine in zip(labels, engines):
            times[label].append(run(engine)[0])
    print(_uptime())
    first = times[labels[0]]
    for label in labels:
        ratio = [a / b for a, b in zip(first, times[label])]
        print(f"{label}: median {statistics.median(times[label]):.2f} CPU s "
              f"({min(times[label]):.2f}-{max(times[label]):.2f}); first/this per round "
              f"{statistics.median(ratio):.3f} ({min(ratio):.3f}-{max(ratio):.3f})")


def timing(args) -> None:
    voice = get_voice(None)
    engines = [Int8OnnxEngine(voice.model_path, voice.config_path, threads=1, cache_dir=args.cache_dir,
                              recipe=_recipe(spec)) for spec in args.recipes]
    for engine in engines:
        engine.load()
    _timed(engines, args.recipes)


def windows(args) -> None:
    voice = get_voice(None)
    engines = []
    for frames in args.frames:
        engine = Int8OnnxEngine(voice.model_path, voice.config_path, threads=1, cache_dir=args.cache_dir)
        engine.window_frames = frames  # 0: whole sentences
        engine.load()
        engines.append(engine)
    _timed(engines, [f"window {f or 'whole'}" for f in args.frames])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache-dir", default="/tmp/studio-int8-levers")
    sub = parser.add_subparsers(dest="command", required=True)
    q = sub.add_parser("quality")
    q.add_argument("recipes", nargs="+")
    q.add_argument("--extra-sentences", help="a text file: more calibration sentences, one a line")
    t = sub.add_parser("time")
    t.add_argument("recipes", nargs="+")
    w = sub.add_parser("windows")
    w.add_argument("frames", nargs="+", type=int)
    args = parser.parse_args()
    {"quality": quality, "time": timing, "windows": windows}[args.command](args)


if __name__ == "__main__":
    main()
