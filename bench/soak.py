"""Memory soak: 100 long passages through one engine, RSS (and VRAM) after each.

    python bench/soak.py                    # torch engine (onnx if torch is unavailable)
    python bench/soak.py --engine onnx --device cpu --threads 2
    python bench/soak.py --no-tuning        # library-default allocators (shows the growth)
    python bench/soak.py --isolated         # soak the model process of an IsolatedEngine

Exits 1 when memory grows by 5 % or more after the warm-up; the logic lives in
studio.measure.soak (the tests run the same function).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from studio.measure.soak import SoakSample, make_passages, run_soak, soak  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", choices=["auto", "torch", "onnx"], default="auto",
                        help="backend (auto: torch, else onnx)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--passages", type=int, default=100)
    parser.add_argument("--min-chars", type=int, default=300)
    parser.add_argument("--max-chars", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--limit", type=float, default=0.05, help="allowed growth fraction")
    parser.add_argument("--no-tuning", action="store_true",
                        help="do not bound the allocators (glibc mmap threshold, oneDNN cache)")
    parser.add_argument("--isolated", action="store_true",
                        help="run the model in an IsolatedEngine child and measure the child")
    parser.add_argument("--quiet", action="store_true", help="no per-passage lines")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    label = f"{args.engine}{' (isolated child)' if args.isolated else ''}"
    print(f"[soak] {label}: {args.passages} passages of {args.min_chars}-{args.max_chars} chars, "
          f"warm-up {args.warmup}, tuning {'off' if args.no_tuning else 'on'}", flush=True)
    t0 = time.perf_counter()

    def progress(sample: SoakSample) -> None:
        if not args.quiet:
            print(f"[soak] {sample.index + 1:>4}/{args.passages}  RSS {sample.rss_bytes / 2**20:8.1f} MiB"
                  f"  {sample.seconds:6.2f} s", flush=True)

    if args.isolated:
        result = _isolated(args, progress)
    else:
        result = soak(args.engine, args.passages, min_chars=args.min_chars, max_chars=args.max_chars,
                      device=args.device, threads=args.threads, warmup=args.warmup, limit=args.limit,
                      tune=not args.no_tuning, on_sample=progress)
    print()
    print(result.table())
    print()
    print(f"[soak] {label}, total {time.perf_counter() - t0:.0f} s")
    print(result.summary())
    return 0 if result.passed else 1


def _isolated(args, progress):
    from dataclasses import replace

    from studio.engine.presets import preset_for_backend
    from studio.stack.build import engine_spec, plan_engine
    from studio.stack.isolation.engine import IsolatedEngine
    from studio.stack.isolation.memory import NO_BOUNDS

    backend = "torch" if args.engine == "auto" else args.engine
    plan = plan_engine(preset_for_backend(backend), device=args.device, streams=1, threads=args.threads)
    spec = engine_spec(plan)
    if args.no_tuning:
        spec = replace(spec, heap=NO_BOUNDS)
    engine = IsolatedEngine(spec, recycle_after=None)

    def measure():
        mem = engine.memory
        assert mem is not None
        return mem.rss_bytes, mem.cuda_allocated_bytes, mem.cuda_reserved_bytes

    try:
        return run_soak(engine, make_passages(args.passages, min_chars=args.min_chars, max_chars=args.max_chars),
                        warmup=args.warmup, limit=args.limit, measure=measure, on_sample=progress)
    finally:
        engine.close()


if __name__ == "__main__":
    sys.exit(main())
