"""``studio bench`` and the preset options of ``studio render``.

The render parser takes :func:`add_preset_arguments` from here. Imports stay light here; the
measuring code (:mod:`studio.measure.runner`) is imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studio.cli.common import EXIT_INCOMPLETE, print_table
from studio.core.errors import StudioError

# ------------------------------------------------------------------ render options


def add_preset_arguments(parser: argparse.ArgumentParser) -> None:
    """``--preset`` and ``--streams`` for ``studio render``."""
    from studio.engine.presets import PRESETS  # data only: no torch, no onnxruntime

    group = parser.add_argument_group(
        "preset",
        "A preset names engine, device and precision (see `studio bench` for measured figures). It is "
        "stored in the project and is part of every sentence's cache key: switching presets renders "
        "again, switching back reuses the audio. A preset that cannot run here stops with the reason.",
    )
    group.add_argument(
        "--preset", choices=tuple(PRESETS), metavar="NAME",
        help=f"one of {', '.join(PRESETS)} (default: the project's, else fp32-cpu)",
    )
    group.add_argument(
        "--streams", type=int, metavar="N",
        help="fp32-cpu / int8-cpu: N single-thread model sessions fed longest sentence first "
             "(default: the number of physical cores)",
    )


# ------------------------------------------------------------------ bench


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench", help="measure the presets on this machine",
        description="Measure every preset this machine can run (unavailable ones are listed with the "
        "reason): latency, throughput on a book-like text, memory, quality against FP32, and the piper "
        "command line on the same text and voice for comparison. Writes bench.json, bench.md and PNG "
        "plots, and copies bench.json to the studio cache folder for the desktop app's preset picker.",
    )
    p.add_argument("--presets", metavar="A,B", help="comma-separated presets (default: all; fp32-cpu is "
                   "always measured too, as the quality reference)")
    p.add_argument("--out", type=Path, default=Path("bench-results"), metavar="DIR",
                   help="folder for bench.json, bench.md and the plots (default: bench-results)")
    p.add_argument("--quick", action="store_true", help="a few sentences and short timings (for tests)")
    p.add_argument("--streams", type=int, metavar="N", help="streams of fp32-cpu / int8-cpu (default: physical cores)")
    p.add_argument("--rounds", type=int, metavar="N", help="timed rounds of the whole text, interleaved, median shown "
                   "(default: 3, fewer when the time budget runs out; quick: 1)")
    p.add_argument("--time-budget", type=float, metavar="S", help="start no further round after S seconds "
                   "of measuring (default: 420)")
    p.add_argument("--sentences", type=int, metavar="N", help="sentences of the text (default: 36; quick: 4)")
    p.add_argument("--text", type=Path, metavar="FILE", help="manuscript to take the sentences from "
                   "(default: resources/sample.md)")
    p.add_argument("--wer-sentences", type=int, metavar="N", help="sentences scored by speech recognition "
                   "(default: 5; quick: 1; 0: no WER)")
    p.add_argument("--no-piper", action="store_true", help="leave out the piper command line row")
    p.add_argument("--whole-pairs", type=int, metavar="N", help="pairs of whole processes (studio render, piper) "
                   "per CPU preset on 1,000+ words of long prose, the report's first table (default: 3; quick: 0)")
    p.add_argument("--no-plots", action="store_true", help="no PNG plots")
    p.add_argument("--families", action="store_true", help="also measure each voice family's CPU presets here "
                   "(as `studio voices measure`): the fastest within the family's quality bound becomes its default")
    p.add_argument("--no-cache-copy", action="store_true",
                   help="do not copy bench.json to $STUDIO_CACHE_DIR (default ~/.cache/studio)")
    p.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    from studio.measure.runner import BenchConfig, run_bench

    names = [n.strip() for n in (args.presets or "").split(",") if n.strip()] or None
    if names:
        from studio.engine.presets import get_preset

        for n in names:
            get_preset(n)  # unknown: PresetUnavailable naming the choices (exit 2)
    for flag, value in (("--streams", args.streams), ("--rounds", args.rounds), ("--sentences", args.sentences)):
        if value is not None and value < 1:
            raise StudioError(f"{flag} {value} must be 1 or more")
    if args.whole_pairs is not None and args.whole_pairs < 0:
        raise StudioError(f"--whole-pairs {args.whole_pairs} must be 0 or more")
    if args.wer_sentences is not None and args.wer_sentences < 0:
        raise StudioError(f"--wer-sentences {args.wer_sentences} must be 0 or more")
    kw = {k: v for k, v in {
        "presets": names, "out_dir": args.out, "streams": args.streams, "rounds": args.rounds,
        "sentences": args.sentences, "text_path": args.text, "wer_sentences": args.wer_sentences,
        "time_budget_s": args.time_budget, "whole_pairs": args.whole_pairs,
    }.items() if v is not None}
    kw.update(piper=not args.no_piper, plots=not args.no_plots, copy_to_cache=not args.no_cache_copy)
    config = BenchConfig.quick_config(**kw) if args.quick else BenchConfig(**kw)

    def say(msg: str) -> None:
        sys.stderr.write(f"studio bench: {msg}\n")
        sys.stderr.flush()

    result = run_bench(config, progress=say)
    _print_summary(result, config.out_dir)
    if args.families:
        from studio.cli.voices import measure_families

        measure_families(rounds=1 if args.quick else 3)
    _print_fastest_per_family()
    failed = [n for n, r in result["presets"].items() if r.get("error")]
    return EXIT_INCOMPLETE if failed else 0


def _print_fastest_per_family() -> None:
    """One line per voice family: the preset measured fastest here within its quality bound."""
    from studio.engine.voice.catalog import list_voices
    from studio.stack.preset_speed import measured_choice

    seen: set[str] = set()
    for voice in list_voices():
        group = voice.abilities.speed_group
        if not group or group in seen:
            continue
        seen.add(group)
        choice = measured_choice(voice)
        sys.stdout.write(f"fastest here for {group} voices: " + (
            f"{choice.preset} ({choice.why})" if choice else "not measured (studio bench --families)") + "\n")


def _print_summary(result: dict, out_dir: Path) -> None:
    from studio.measure.report import load_note

    out = sys.stdout
    out.write(f"measured {result.get('measured_at', '?')} on {result['machine_description']}\n")
    note = load_note(result)
    if note:
        out.write(note.replace("**", "") + "\n")
    whole = result.get("whole_process")
    if whole:
        from studio.measure.whole import markdown_table

        out.write(f"whole processes on {whole['text']['source']}:\n")
        out.write("\n".join(line.replace("**", "") for line in markdown_table(whole)) + "\n\nsteady state:\n")
    rows = [("PRESET", "X REAL TIME", "RTF", "SENT/S", "VS PIPER", "P50 S", "PEAK RSS", "LOG-MEL", "FLOOR DBFS", "WER")]
    piper = (result.get("piper_cli") or {}).get("steady")
    if piper:
        rows.append(("piper CLI (steady)", f"{piper['x_real_time']:.2f}", f"{piper['rtf']:.3f}",
                     f"{piper['sentences_per_s']:.2f}", "1.00x", "-",
                     f"{(piper.get('rss_peak_bytes') or 0) / 2**20:.0f} MiB", "-", "-", "-"))
    for name, r in result["presets"].items():
        if r.get("error"):
            rows.append((name, "failed: " + r["error"][:80], "", "", "", "", "", "", "", ""))
            continue

        def f(v, fmt):
            return "-" if v is None else fmt.format(v)

        rows.append((name, f(r.get("x_real_time"), "{:.2f}"), f(r.get("rtf"), "{:.3f}"),
                     f(r.get("sentences_per_s"), "{:.2f}"), f(r.get("vs_piper"), "{:.2f}x"),
                     f(r.get("latency_p50_s"), "{:.2f}"), f((r.get("rss_peak_bytes") or 0) / 2**20, "{:.0f} MiB"),
                     f(r.get("log_mel_correlation"), "{:.4f}"), f(r.get("noise_floor_dbfs"), "{:.1f}"),
                     f(r.get("wer"), "{:.3f}")))
    print_table(rows, out)
    for name, why in (result.get("unavailable") or {}).items():
        out.write(f"unavailable: {name}: {why}\n")
    rec = result.get("recommendation")
    if rec:  # the desktop's Voices & Presets dialog recommends the same from bench.json
        out.write(f"recommended on this machine: {rec['preset']} ({rec['why']})\n")
    out.write("targets:\n")
    for t in result.get("targets", []):
        out.write(f"  {t['description']}: {t['verdict']}\n")
    out.write(f"wrote {out_dir / 'bench.json'}, {out_dir / 'bench.md'}"
              + "".join(f", {out_dir / v}" for v in (result.get("files") or {}).values()) + "\n")
    if result.get("cache_copy"):
        out.write(f"copied to {result['cache_copy']}\n")
    out.write(f"took {result['duration_s']:.0f} s\n")
