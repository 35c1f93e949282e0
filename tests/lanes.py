"""The whole suite in lanes: batches of test files, each its own pytest process, two at a time.

Why: one pytest process over the whole suite used one core of two and grew to over 4 GB, because
every model, library and heap page a file touched stayed for every later file. Here each batch
(about ``--budget`` CPU seconds of files, by the costs the suite's plugin recorded last time,
``tests/costs.tsv``) starts fresh and ends, and ``--lanes`` batches run side by side, the
costliest first. Batches that import torch run one at a time, so two never add up. The run
ends with every batch's result, the highest resident memory of one test process and of all the
suite's processes together, and the CPU time: the figures docs/testing.md records.

Usage: ``python tests/lanes.py [--lanes N] [--budget S] [--costs-out PATH] [PATH ...] [-- PYTEST ARGS]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
COSTS = TESTS / "costs.tsv"
#: files run in a real X server after the lanes, by the test command itself
APART = {"tests/desktop/test_walkthrough.py"}
#: a test file that imports one of these builds torch models: such batches never run side by side
HEAVY = re.compile(r"^\s*(?:import|from)\s+(?:torch|TTS)\b|coqui|xtts", re.IGNORECASE | re.MULTILINE)
#: CPU seconds assumed per test of a file the cost table has not seen yet
UNSEEN_PER_TEST = 1.5
#: below this free disk the run warns before it starts
LOW_DISK_MB = 4096


@dataclass
class Batch:
    """Test files run by one pytest process."""

    files: list[str]
    cost: float
    heavy: bool
    number: int = 0
    log: Path | None = None
    returncode: int | None = None
    wall: float = 0.0
    cpu: float = 0.0
    peak_mb: float = 0.0
    summary: str = ""
    failed: list[str] = field(default_factory=list)


def test_files(under: list[Path] | None = None) -> list[str]:
    """The test files under the given folders or files (every one by default), as paths from the
    repository root, the walkthrough left out."""
    found: set[str] = set()
    for root in under or [TESTS]:
        root = root.resolve()
        paths = [root] if root.is_file() else root.rglob("test_*.py")
        found.update(p.relative_to(REPO).as_posix() for p in paths)
    return sorted(f for f in found if f not in APART and "/support/" not in f)


def read_costs(path: Path = COSTS) -> dict[str, float]:
    """CPU seconds per file from the last recorded run (a missing table means every file unseen)."""
    costs: dict[str, float] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#"):
                seconds, name = line.split("\t")[:2]
                costs[name] = float(seconds)
    return costs


def guessed_cost(path: str) -> float:
    """A file the table has not seen: its number of tests, at a typical test's cost."""
    text = (REPO / path).read_text(encoding="utf-8", errors="replace")
    return max(1, len(re.findall(r"^\s*(?:async\s+)?def test_", text, re.MULTILINE))) * UNSEEN_PER_TEST


def is_heavy(path: str) -> bool:
    return bool(HEAVY.search((REPO / path).read_text(encoding="utf-8", errors="replace")))


def plan(files: list[str], costs: dict[str, float], budget: float) -> list[Batch]:
    """Cut the files, kept in path order (neighbours share fixtures and imports), into batches of
    about ``budget`` CPU seconds, heavy and light apart; the costliest batch first."""
    batches: list[Batch] = []
    heavy_files = {f for f in files if is_heavy(f)}
    for heavy in (True, False):
        current: list[str] = []
        cost = 0.0
        for f in files:
            if (f in heavy_files) != heavy:
                continue
            c = costs[f] if f in costs else guessed_cost(f)
            if current and cost + c > budget:
                batches.append(Batch(current, cost, heavy))
                current, cost = [], 0.0
            current.append(f)
            cost += c
        if current:
            batches.append(Batch(current, cost, heavy))
    batches.sort(key=lambda b: -b.cost)
    for n, b in enumerate(batches, 1):
        b.number = n
    return batches


class Meter(threading.Thread):
    """Samples the resident memory of every process the suite started (children included), and
    the free disk under the logs: a full disk fails every later batch with an empty log."""

    def __init__(self, logs: Path) -> None:
        super().__init__(daemon=True)
        self.logs = logs
        self.pids: set[int] = set()
        self.peak_total_mb = 0.0
        self.start_free_mb = self.lowest_free_mb = free_mb(logs)
        self.lock = threading.Lock()
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.5):
            self.lowest_free_mb = min(self.lowest_free_mb, free_mb(self.logs))
            total = 0
            with self.lock:
                pids = list(self.pids)
            for pid in pids:
                try:
                    proc = psutil.Process(pid)
                    total += proc.memory_info().rss
                    total += sum(c.memory_info().rss for c in proc.children(recursive=True))
                except psutil.Error:
                    continue
            self.peak_total_mb = max(self.peak_total_mb, total / 2**20)


def free_mb(path: Path) -> float:
    """Free disk space where ``path`` lies, in MiB."""
    return shutil.disk_usage(path).free / 2**20


def run_batch(batch: Batch, pytest_args: list[str], logs: Path, costs_out: Path | None, meter: Meter) -> None:
    """One pytest process over the batch's files; its log, CPU time and peak memory kept."""
    batch.log = logs / f"batch-{batch.number:02d}.log"
    basetemp = logs / f"tmp-{batch.number:02d}"
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--cost-report=0",
            f"--basetemp={basetemp}"]
    if costs_out is not None:
        args.append(f"--cost-log={costs_out}")
    started = time.monotonic()
    with batch.log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen([*args, *pytest_args, *batch.files], cwd=REPO, stdout=out,
                                stderr=subprocess.STDOUT)
        with meter.lock:
            meter.pids.add(proc.pid)
        if hasattr(os, "wait4"):
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            batch.cpu = usage.ru_utime + usage.ru_stime  # its children (`studio` commands) included
            batch.peak_mb = usage.ru_maxrss / 2**10
        else:
            proc.wait()
        with meter.lock:
            meter.pids.discard(proc.pid)
    batch.returncode = proc.returncode
    batch.wall = time.monotonic() - started
    text = batch.log.read_text(encoding="utf-8", errors="replace")
    batch.failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", text, re.MULTILINE)
    last = [line for line in text.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    batch.summary = last[-1].strip("= ") if last else f"exit {proc.returncode}, no summary"
    if proc.returncode in (0, 5):
        # a passed batch's files go at once: the whole suite's come to over 7 GB
        shutil.rmtree(basetemp, ignore_errors=True)


def run_lanes(batches: list[Batch], lanes: int, pytest_args: list[str], logs: Path,
              costs_out: Path | None) -> Meter:
    """Run the batches ``lanes`` at a time, the costliest first, one heavy batch at a time."""
    queue = list(batches)
    lock, heavy_slot = threading.Lock(), threading.Semaphore(1)
    meter = Meter(logs)
    meter.start()

    def lane() -> None:
        while True:
            with lock:
                ready = next((b for b in queue if not b.heavy or heavy_slot.acquire(blocking=False)), None)
                if ready is None and queue:
                    ready = queue[0]  # only heavy batches left, another running: wait for its slot
                    heavy_slot.acquire()
                if ready is None:
                    return
                queue.remove(ready)
            try:
                run_batch(ready, pytest_args, logs, costs_out, meter)
            finally:
                if ready.heavy:
                    heavy_slot.release()
            print(f"[{ready.number:2d}] {ready.summary}  ({ready.wall:.0f} s wall, {ready.cpu:.0f} CPU s, "
                  f"peak {ready.peak_mb:.0f} MB, {len(ready.files)} files)", flush=True)

    threads = [threading.Thread(target=lane) for _ in range(lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    meter.stopped.set()
    return meter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lanes", type=int, default=int(os.environ.get("STUDIO_TEST_LANES", "2")),
                        help="pytest processes side by side (default 2, or $STUDIO_TEST_LANES)")
    parser.add_argument("--budget", type=float, default=150.0, help="CPU seconds of files per batch")
    parser.add_argument("--costs-out", type=Path,
                        help="write the measured CPU seconds per file here (a new tests/costs.tsv)")
    parser.add_argument("paths", nargs="*", type=Path, help="test folders or files (default: all)")
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.pytest_args = argv[cut + 1:]  # after --: passed to every pytest process
    logs = Path(tempfile.mkdtemp(prefix="studio-suite-"))
    raw = logs / "cost-log.tsv" if args.costs_out else None
    batches = plan(test_files(args.paths), read_costs(), args.budget)
    print(f"{len(batches)} batches in {args.lanes} lanes; logs in {logs}", flush=True)
    if (free := free_mb(logs)) < LOW_DISK_MB:
        print(f"warning: {free / 1024:.1f} GB free under {logs}; a batch's files reach 1.3 GB, "
              "two lanes' twice that", flush=True)
    started = time.monotonic()
    meter = run_lanes(batches, max(1, args.lanes), args.pytest_args, logs, raw)
    wall = time.monotonic() - started
    if raw is not None and raw.is_file():
        rows = [line.split("\t") for line in raw.read_text(encoding="utf-8").splitlines()]
        args.costs_out.write_text("# CPU s\tfile (written by tests/lanes.py --costs-out)\n"
                                  + "".join(f"{r[0]}\t{r[4]}\n" for r in sorted(rows, key=lambda r: r[4])),
                                  encoding="utf-8")
    failed = [b for b in batches if b.returncode not in (0, 5)]  # 5: nothing collected
    print(f"\nsuite: {len(batches)} batches, {wall / 60:.1f} min wall, "
          f"{sum(b.cpu for b in batches):.0f} CPU s; peak resident {max((b.peak_mb for b in batches), default=0):.0f} MB "
          f"in one test process, {meter.peak_total_mb:.0f} MB all processes together; free disk "
          f"{meter.start_free_mb / 1024:.1f} GB at the start, {meter.lowest_free_mb / 1024:.1f} GB at the lowest")
    for b in failed:
        print(f"\nbatch {b.number} failed ({b.summary}); log {b.log}:")
        for name in b.failed:
            print(f"  FAILED {name}")
        if not b.failed and b.log is not None:
            lines = b.log.read_text(encoding="utf-8", errors="replace").splitlines()
            print("\n".join(lines[-30:]) if lines else
                  f"  (the log is empty: nothing could be written? {meter.lowest_free_mb:.0f} MB free at the lowest)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
