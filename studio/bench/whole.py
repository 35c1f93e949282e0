"""Whole processes on long prose: ``studio render`` against the ``piper`` command line.

Why this leads the benchmark: a user compares what they can run -- ``studio render
book.txt`` against ``piper -m voice.onnx -f out.wav`` -- start-up, model load and
export included, on book prose with long sentences. Figures of warm engines on short
sentences, with piper's start-up subtracted, flattered the studio on exactly the
text users do not have. So each pair here is two fresh processes on the same text,
studio and piper alternating (A B A B: a machine that slows down during the run
slows both), the ratio taken pair by pair, medians with the spread shown. Peak
memory is the largest single process of each command (``wait4``'s ``ru_maxrss``),
and the load average is recorded, with a warning in the report when the machine was
shared (more than half a runnable task per core).

The text is the user's book (``studio bench --text FILE``), else chapters of the
public-domain EPUB fixtures next to the repository, else the bundled sample
repeated; at least :data:`MIN_WORDS` words of it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from studio.core.errors import StudioError

#: the least prose a whole-process comparison runs on
MIN_WORDS = 1000
#: pairs of runs (studio, piper) per preset
DEFAULT_PAIRS = 3
#: a load average above this per logical CPU makes the figures "measured on a shared machine"
BUSY_LOAD_PER_CPU = 0.5
#: where the repository's own runs find long public-domain prose
FIXTURE_EPUB = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "epub" / "childrens-literature.epub"


@dataclass(frozen=True)
class Run:
    """One finished process: wall and CPU seconds, peak RSS of its largest process."""

    wall_s: float
    cpu_s: float
    peak_bytes: int
    returncode: int


def run_process(cmd: Sequence[str], *, timeout_s: float = 1800.0, cwd: Path | None = None) -> Run:
    """Run ``cmd`` to its end; its own and its children's CPU time and largest RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=cwd)
    deadline = t0 + timeout_s
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.01)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise StudioError(f"{Path(cmd[0]).name} exited with {proc.returncode}: {err.strip()[-400:]}")
    # Linux reports ru_maxrss in KiB (the largest of the process and its waited-for children)
    return Run(wall, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss) * 1024, proc.returncode)


def long_prose(path: Path | None = None, min_words: int = MIN_WORDS) -> tuple[str, str]:
    """``(text, source)``: at least ``min_words`` words of prose, whole paragraphs."""
    from studio.text.importer import load_manuscript

    candidates = [path] if path is not None else [p for p in (FIXTURE_EPUB,) if p.is_file()]
    for src in candidates:
        book = load_manuscript(src)
        paragraphs: list[str] = []
        words = 0
        for chapter in book.chapters:
            if chapter.front_matter:
                continue
            for paragraph in chapter.paragraphs:
                text = " ".join(paragraph.text.split())
                if len(text.split()) < 20:  # headings, lists, bylines: not prose
                    continue
                paragraphs.append(text)
                words += len(text.split())
            if words >= min_words:
                break
        if words >= min_words or path is not None:
            return "\n\n".join(paragraphs), f"{src.name}, first {words} words of prose"
    sample = Path(__file__).resolve().parents[1].parent / "resources" / "sample.md"
    raise StudioError(f"no long prose found: give a book with --text FILE (the fixtures and {sample.name} are missing)")


def load_now() -> float:
    return os.getloadavg()[0]


def compare(
    text_file: Path,
    presets: Sequence[str],
    *,
    voice_model: Path,
    voice_config: Path,
    pairs: int = DEFAULT_PAIRS,
    say: Callable[[str], None] = lambda _m: None,
) -> dict[str, Any]:
    """Pairs of ``studio render`` (per preset) and ``piper`` whole processes; medians and spread."""
    if pairs < 1:
        raise StudioError("pairs must be 1 or more")
    loads = [load_now()]
    rows: dict[str, Any] = {}
    piper_runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="studio-bench-whole-") as tmp:
        work = Path(tmp)
        piper_cmd = piper_command() + ["-m", str(voice_model), "-c", str(voice_config),
                                       "-i", str(text_file), "-f", str(work / "piper.wav")]
        for preset in presets:
            studio_runs: list[Run] = []
            ratios: list[float] = []
            for k in range(pairs):
                out = work / f"{preset}-{k}"
                cmd = [sys.executable, "-m", "studio", "render", str(text_file), "-o", str(out),
                       "--format", "wav", "--preset", preset]
                say(f"whole process: {preset} pair {k + 1}/{pairs}")
                a = run_process(cmd)
                b = run_process(piper_cmd)
                loads.append(load_now())
                studio_runs.append(a)
                piper_runs.append(b)
                ratios.append(b.wall_s / a.wall_s)
            rows[preset] = _summary(studio_runs) | {"speed_vs_piper": _spread(ratios)}
    piper = _summary(piper_runs)
    for row in rows.values():
        row["peak_vs_piper"] = row["peak_mib"]["median"] / piper["peak_mib"]["median"]
    cpus = os.cpu_count() or 1
    busy = max(loads) / cpus > BUSY_LOAD_PER_CPU
    return {
        "pairs": pairs, "presets": rows, "piper_cli": piper,
        "load_average": {"min": min(loads), "max": max(loads), "samples": loads, "busy": busy, "cpus": cpus},
    }


def whole_process(text_path: Path | None, voice: Any, presets: Sequence[str], pairs: int, work: Path,
                  say: Callable[[str], None]) -> dict[str, Any]:
    """The benchmark's leading table: :func:`compare` on :func:`long_prose` of ``text_path``."""
    text, source = long_prose(text_path)
    text_file = work / "long-prose.txt"
    text_file.write_text(text + "\n", encoding="utf-8")
    say(f"whole processes on {source}: {len(presets)} preset(s) x {pairs} pair(s) with the piper CLI")
    whole = compare(text_file, presets, voice_model=voice.model_path, voice_config=voice.config_path,
                    pairs=pairs, say=say)
    whole["text"] = {"source": source, "words": len(text.split()), "characters": len(text)}
    return whole


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _summary(runs: Sequence[Run]) -> dict[str, Any]:
    return {
        "runs": len(runs),
        "wall_s": _spread([r.wall_s for r in runs]),
        "cpu_s": _spread([r.cpu_s for r in runs]),
        "peak_mib": _spread([r.peak_bytes / 2**20 for r in runs]),
    }


def piper_command() -> list[str]:
    from studio.bench.piper_cli import piper_command as command

    return command()


def markdown_table(whole: dict[str, Any]) -> list[str]:
    """The report's leading table (and the load warning when the machine was shared)."""
    p = whole["piper_cli"]

    def cell(s: dict[str, float], fmt: str) -> str:
        return f"{fmt.format(s['median'])} ({fmt.format(s['min'])}-{fmt.format(s['max'])})"

    lines = ["| command | wall s, median (min-max) | CPU s | peak MiB (largest process) | speed vs piper CLI | memory vs piper CLI |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, r in whole["presets"].items():
        lines.append(f"| `studio render --preset {name}` | {cell(r['wall_s'], '{:.1f}')} | {cell(r['cpu_s'], '{:.1f}')} "
                     f"| {cell(r['peak_mib'], '{:.0f}')} | {cell(r['speed_vs_piper'], '{:.2f}')}x "
                     f"| {r['peak_vs_piper']:.2f}x |")
    lines.append(f"| `piper` CLI | {cell(p['wall_s'], '{:.1f}')} | {cell(p['cpu_s'], '{:.1f}')} "
                 f"| {cell(p['peak_mib'], '{:.0f}')} | 1.00x | 1.00x |")
    load = whole["load_average"]
    note = (f"Load average (1 min) {load['min']:.2f}-{load['max']:.2f} on {load['cpus']} CPU(s); "
            f"{whole['pairs']} pair(s) per preset, studio and piper alternating.")
    if load["busy"]:
        note += (" **Warning: the machine was shared (load above half a task per CPU): these whole-process "
                 "figures are not those of a quiet machine.**")
    return lines + ["", note]
