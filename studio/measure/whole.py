"""Whole processes on long prose: ``studio render`` against the ``piper`` command line.

Why this leads the benchmark: a user compares what they can run -- ``studio render
book.txt`` against ``piper -m voice.onnx -f out.wav`` -- start-up, model load and
export included, on book prose with long sentences. Figures of warm engines on short
sentences, with piper's start-up subtracted, flattered the studio on exactly the
text users do not have. So each pair here is two fresh processes on the same text,
studio and piper alternating (A B A B: a machine that slows down during the run
slows both), the ratio taken pair by pair, medians with the spread shown. Peak
memory is the largest single process of each command (``wait4``'s ``ru_maxrss``,
under a small launcher), and what other processes took of the CPUs is recorded, with
a warning in the report when they used more than half of each.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from studio.core.errors import StudioError
from studio.core.system import MACOS, WINDOWS, kill_process_group, load_average, machine_busy_seconds, new_process_group

#: the least prose a whole-process comparison runs on
MIN_WORDS = 1000
#: pairs of runs (studio, piper) per preset
DEFAULT_PAIRS = 3
#: other processes using more than this share of each CPU make the figures "measured on a shared machine"
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


#: the measured command's parent: a small fresh process. Why not run the command
#: directly: Linux carries a process's peak RSS over fork and exec, so a child of
#: the benchmark (engines loaded: over a GiB) would report the benchmark's peak as
#: its own. Under this launcher it inherits a few MiB at most. The launcher times
#: the command itself, so its own start-up is left out for both commands alike.
_LAUNCHER = """
import os, sys, time
t0 = time.perf_counter()
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ,
                      file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
_, status, ru = os.wait4(pid, 0)
print(time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def run_process(cmd: Sequence[str], *, timeout_s: float = 1800.0, cwd: Path | None = None) -> Run:
    """Run ``cmd`` to its end; its own and its children's CPU time and largest RSS."""
    if WINDOWS:  # the launcher waits with wait4, which gives the children's rusage; Windows has none
        raise StudioError("timing whole processes needs Linux or macOS (wait4); run the comparison there")
    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _LAUNCHER, *cmd], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, **new_process_group())
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_process_group(proc)  # the command too: it is in the launcher's group
        proc.communicate()
        raise StudioError(f"{Path(cmd[0]).name} ran past {timeout_s:.0f} s") from None
    fields = out.decode().split()
    if proc.returncode != 0 or len(fields) != 4:
        raise StudioError(f"{Path(cmd[0]).name} could not be run: {err.decode(errors='replace').strip()[-400:]}")
    wall, cpu, maxrss, code = float(fields[0]), float(fields[1]), int(fields[2]), int(fields[3])
    if code != 0:
        raise StudioError(f"{Path(cmd[0]).name} exited with {code}: {err.decode(errors='replace').strip()[-400:]}")
    # ru_maxrss: the largest of the process and its waited-for children, in KiB on Linux, bytes on macOS
    return Run(wall, cpu, maxrss * (1 if MACOS else 1024), code)


@dataclass
class OtherLoad:
    """How busy *other* processes kept the machine while ours ran, in CPUs.

    Why not the load average: during a benchmark it counts the benchmark's own
    processes (a two-stream render alone makes it about 2), so it would call every
    run on a quiet 2-core machine "shared". The machine's busy CPU time minus the
    CPU time of the processes we ran is what others took from us.
    """

    busy0: float | None = field(default_factory=machine_busy_seconds)
    t0: float = field(default_factory=time.monotonic)
    own_cpu_s: float = 0.0

    def add(self, run: Run) -> None:
        self.own_cpu_s += run.cpu_s

    def cpus_used(self) -> float | None:
        busy = machine_busy_seconds()
        if busy is None or self.busy0 is None:
            return None
        return max(0.0, busy - self.busy0 - self.own_cpu_s) / max(time.monotonic() - self.t0, 1e-9)


def is_shared(other_cpus: float | None, loads: Sequence[float], cpus: int) -> bool:
    """Others kept more than half of each CPU busy (the load average where /proc/stat is missing)."""
    value = other_cpus if other_cpus is not None else max(loads)
    return value / cpus > BUSY_LOAD_PER_CPU


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
    return load_average()[0]


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
    others = OtherLoad()
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
                others.add(a)
                others.add(b)
                loads.append(load_now())
                studio_runs.append(a)
                piper_runs.append(b)
                ratios.append(b.wall_s / a.wall_s)
            rows[preset] = _summary(studio_runs) | {"speed_vs_piper": _spread(ratios)}
    piper = _summary(piper_runs)
    for row in rows.values():
        row["peak_vs_piper"] = row["peak_mib"]["median"] / piper["peak_mib"]["median"]
    cpus, other = os.cpu_count() or 1, others.cpus_used()
    return {
        "pairs": pairs, "presets": rows, "piper_cli": piper,
        "load_average": {"min": min(loads), "max": max(loads), "samples": loads, "cpus": cpus,
                         "other_cpus": other, "busy": is_shared(other, loads, cpus)},
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
    from studio.measure.piper_cli import piper_command as command

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
    other = load.get("other_cpus")
    note = (f"{whole['pairs']} pair(s) per preset, studio and piper alternating, on {load['cpus']} CPU(s); "
            + (f"other processes kept {other:.2f} CPU(s) busy meanwhile; " if other is not None else "")
            + f"load average (1 min, the benchmark's own processes included) {load['min']:.2f}-{load['max']:.2f}.")
    if load["busy"]:
        note += (" **Warning: the machine was shared (other processes used more than half of each CPU): these "
                 "whole-process figures are not those of a quiet machine.**")
    return lines + ["", note]
