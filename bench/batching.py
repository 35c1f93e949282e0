"""Speed of batched synthesis vs one item at a time, with the real bundled voice.

    python bench/batching.py [--device cpu|cuda] [--backend onnx|torch]
                             [--sizes 1,2,4,8] [--reps 3] [--json out.json]

Runs the same sentences through ``BatchedEngine.synthesize_many`` (length-sorted
batches) at each max batch size, interleaving the repetitions so background load
hits every size alike, and reports the best and median wall time, the process CPU
time (total work, robust to other load on the machine), the real-time factor
(audio seconds per wall second), the speed-up over batch size 1, the CPU-time
ratio to batch size 1 and the padding overhead. The defaults in
``studio.engine.serving.batched`` (CPU: 1, CUDA: 32) come from this script's output.
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
from studio.engine.serving.batched import BatchedEngine  # noqa: E402
from studio.engine.presets import open_preset
from studio.engine.presets import preset_for_backend  # noqa: E402
from studio.engine.voice.catalog import get_voice  # noqa: E402

SENTENCES = [
    "The rain had stopped.",
    "She folded the letter twice and put it in her coat pocket.",
    "Nobody answered.",
    "Across the valley, the bells of the old church began to ring for evening prayers.",
    "He waited.",
    "The train was late again, and the platform was crowded with tired commuters.",
    "Why not?",
    "It was the kind of morning that made everything seem possible, even the impossible.",
    "The dog barked once, then settled back into its basket by the fire.",
    "Thank you.",
    "They walked along the river until the lights of the town disappeared behind them.",
    "A single candle burned in the window.",
    "When the storm finally broke, the whole house seemed to shiver and groan.",
    "Perhaps tomorrow.",
    "The children ran ahead, laughing, while their parents followed slowly.",
    "At last the door opened, and a tall stranger stepped inside, shaking snow from his hat.",
]


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on Linux
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--backend", default="onnx")
    ap.add_argument("--sizes", default="1,2,4,8")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="intra-op threads (default: all cores)")
    ap.add_argument("--bucket-ratio", type=float, default=1e9,
                    help="max length ratio inside a batch (default: unlimited, plain sorted batches)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    engine = open_preset(preset_for_backend(args.backend), get_voice(None), device=args.device, threads=args.threads)
    engine.load()
    settings: SynthesisSettings = getattr(engine, "default_settings", SynthesisSettings())
    ids = [engine.text_to_ids(s, "en") for s in SENTENCES]
    sr = engine.sample_rate
    print(f"# batching bench: backend={args.backend} device={args.device} cores={os.cpu_count()} "
          f"threads={args.threads or 'default'} sentences={len(ids)} ids={sum(map(len, ids))} "
          f"loadavg={_loadavg()}", flush=True)

    # warm-up: one pass at every size (ORT allocates arenas per shape)
    wrapped = {b: BatchedEngine(engine, max_batch_size=b, bucket_ratio=args.bucket_ratio,
                                device=args.device, close_engine=False) for b in sizes}
    audio_s = sum(len(a) for a in wrapped[sizes[0]].synthesize_many(ids, settings)) / sr
    for b in sizes[1:]:
        wrapped[b].synthesize_many(ids, settings)
    times: dict[int, list[float]] = {b: [] for b in sizes}
    cpu: dict[int, list[float]] = {b: [] for b in sizes}
    for _ in range(args.reps):
        for b in sizes:
            t0, c0 = time.perf_counter(), time.process_time()
            wrapped[b].synthesize_many(ids, settings)
            times[b].append(time.perf_counter() - t0)
            cpu[b].append(time.process_time() - c0)

    base = min(times[sizes[0]])
    rows = []
    base_cpu = min(cpu[sizes[0]])
    print(f"{'batch':>5} {'best_s':>8} {'median_s':>8} {'cpu_s':>7} {'x_realtime':>10} {'speedup':>8} "
          f"{'cpu_ratio':>9} {'mean_bs':>7} {'padding':>8}")
    for b in sizes:
        best, med = min(times[b]), statistics.median(times[b])
        st = wrapped[b].stats()
        row = dict(batch_size=b, best_s=best, median_s=med, cpu_s=min(cpu[b]), audio_s=audio_s,
                   cpu_ratio_vs_1=min(cpu[b]) / base_cpu,
                   x_realtime=audio_s / best, speedup_vs_1=base / best,
                   mean_batch_size=st.mean_batch_size, padding_overhead=st.padding_overhead)
        rows.append(row)
        print(f"{b:>5} {best:>8.2f} {med:>8.2f} {min(cpu[b]):>7.2f} {audio_s / best:>10.1f} "
              f"{base / best:>8.2f} {min(cpu[b]) / base_cpu:>9.2f} "
              f"{st.mean_batch_size:>7.2f} {st.padding_overhead:>7.0%}")
    print(f"# audio per pass: {audio_s:.1f} s; loadavg after: {_loadavg()}")
    if args.json:
        args.json.write_text(json.dumps(dict(
            backend=args.backend, device=args.device, cores=os.cpu_count(),
            threads=args.threads, rows=rows), indent=2))
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
