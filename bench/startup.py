"""Start-up budget: whole-process times of a one-sentence render and of ``studio --help``.

Why a script and not a timed unit test: a start-up figure is only meaningful on a
quiet machine, repeated and alternated with a yardstick; a test that fails because
someone else's job ran at the same time teaches nothing. This prints the figures,
the budget of each (issue #9: one-sentence ``studio render`` at most 1.5 s with
``fp32-cpu`` and 2 s with ``int8-cpu``, its INT8 model cached; ``studio --help`` at
most 0.3 s), met or missed by how much, next to the ``piper`` CLI on the same
sentence, with the load average and a warning when the machine was shared.

    python bench/startup.py [--runs 5] [--profile]

``--profile`` also writes ``python -X importtime`` of the one-sentence render (the
parent process) to ``startup-importtime.txt`` and prints the slowest imports.
Exit status 0 when every budget was met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from studio.measure.whole import OtherLoad, is_shared, piper_command, run_process  # noqa: E402

SENTENCE = "The rain had stopped by the time the last train pulled into the station."
#: seconds, whole process, quiet machine
BUDGETS = {"studio --help": 0.3, "render fp32-cpu": 1.5, "render int8-cpu": 2.0}


def studio(*args: str) -> list[str]:
    return [sys.executable, "-m", "studio", *args]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command, alternating (default 5)")
    parser.add_argument("--profile", action="store_true", help="also write an import-time profile")
    args = parser.parse_args()
    env_note = "PYTHONPATH" in os.environ
    from studio.engine.voice.catalog import get_voice

    voice = get_voice(None)
    with tempfile.TemporaryDirectory(prefix="studio-startup-") as tmp:
        work = Path(tmp)
        text = work / "one.txt"
        text.write_text(SENTENCE + "\n", encoding="utf-8")
        # warm the caches a first render fills (cut graph, language profiles, INT8 build)
        for preset in ("fp32-cpu", "int8-cpu"):
            subprocess.run(studio("render", str(text), "-o", str(work / f"warm-{preset}"), "--format", "wav",
                                  "--preset", preset), check=True, capture_output=True)
        commands = {
            "studio --help": lambda k: studio("--help"),
            "render fp32-cpu": lambda k: studio("render", str(text), "-o", str(work / f"f{k}"), "--format", "wav",
                                                "--preset", "fp32-cpu"),
            "render int8-cpu": lambda k: studio("render", str(text), "-o", str(work / f"i{k}"), "--format", "wav",
                                                "--preset", "int8-cpu"),
            "piper CLI": lambda k: piper_command() + ["-m", str(voice.model_path), "-c", str(voice.config_path),
                                                      "-i", str(text), "-f", str(work / f"p{k}.wav")],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        peaks: dict[str, list[float]] = {name: [] for name in commands}
        loads, others = [os.getloadavg()[0]], OtherLoad()
        for k in range(args.runs):
            for name, make in commands.items():  # interleaved: a slow moment hits every command
                run = run_process(make(k))
                others.add(run)
                times[name].append(run.wall_s)
                peaks[name].append(run.peak_bytes / 2**20)
            loads.append(os.getloadavg()[0])
        if args.profile:
            out = Path.cwd() / "startup-importtime.txt"
            done = subprocess.run([sys.executable, "-X", "importtime", "-m", "studio", "render", str(text), "-o",
                                   str(work / "profile"), "--format", "wav", "--preset", "fp32-cpu"],
                                  capture_output=True, text=True, check=True)
            out.write_text(done.stderr, encoding="utf-8")
            rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
            rows = [(int(r[1]), r[2].rstrip()) for r in rows if r[1].strip().isdigit()]
            print(f"slowest imports (cumulative, parent process; full list in {out.name}):")
            for us, name in sorted(rows, reverse=True)[:15]:
                print(f"  {us / 1e3:8.1f} ms {name}")

    cpus, other = os.cpu_count() or 1, others.cpus_used()
    print(f"{args.runs} run(s) each, interleaved, whole processes{' (PYTHONPATH set)' if env_note else ''}, on "
          f"{cpus} CPU(s); " + (f"other processes kept {other:.2f} CPU(s) busy meanwhile; " if other is not None else "")
          + f"load average (1 min, these runs included) {min(loads):.2f}-{max(loads):.2f}")
    if is_shared(other, loads, cpus):
        print("WARNING: the machine was shared (other processes used more than half of each CPU): "
              "these are not quiet-machine figures")
    print(f"{'command':18} {'median s':>9} {'min':>7} {'max':>7} {'peak MiB':>9}  budget")
    ok = True
    for name in commands:
        med = statistics.median(times[name])
        budget = BUDGETS.get(name)
        verdict = ""
        if budget is not None:
            met = med <= budget
            ok &= met
            verdict = (f"{budget:.1f} s: met" if met else f"{budget:.1f} s: MISSED by {med - budget:.2f} s "
                       f"({med / budget:.2f}x)")
        print(f"{name:18} {med:9.2f} {min(times[name]):7.2f} {max(times[name]):7.2f} "
              f"{statistics.median(peaks[name]):9.0f}  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
