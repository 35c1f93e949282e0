"""The whole-process table of ``studio bench``: its text, its process timing, its report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from studio.measure.whole import FIXTURE_EPUB, MIN_WORDS, OtherLoad, long_prose, markdown_table, run_process
from studio.core.errors import StudioError


@pytest.mark.skipif(not FIXTURE_EPUB.is_file(), reason="shared EPUB fixtures not present")
def test_long_prose_is_a_thousand_words_of_long_paragraphs():
    text, source = long_prose()
    paragraphs = text.split("\n\n")
    assert len(text.split()) >= MIN_WORDS and FIXTURE_EPUB.name in source
    assert all(len(p.split()) >= 20 for p in paragraphs)  # no headings or list items
    assert max(len(p.split()) for p in paragraphs) >= 100  # book-length sentences, not the sample's


def test_run_process_reports_time_cpu_and_peak_memory(tmp_path: Path):
    run = run_process([sys.executable, "-c", "x = bytearray(64 * 2**20); sum(range(10**6))"])
    assert run.returncode == 0 and run.wall_s > 0 and run.cpu_s > 0
    assert run.peak_bytes >= 64 * 2**20
    with pytest.raises(StudioError, match="exited with 3"):
        run_process([sys.executable, "-c", "import sys; sys.exit(3)"])


def test_a_small_command_does_not_inherit_the_benchmarks_peak_memory():
    """Linux carries the peak RSS over fork and exec: a benchmark holding loaded engines
    would otherwise lend its peak to every command it measures."""
    ballast = bytearray(400 * 2**20)
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])  # touched: resident
    run = run_process([sys.executable, "-c", "pass"])
    assert run.peak_bytes < 100 * 2**20
    del ballast


def test_other_load_counts_other_processes_and_not_ours():
    others, ours = OtherLoad(), OtherLoad()
    busy = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                             "while time.process_time() - t < 1.0: pass"])
    run = run_process([sys.executable, "-c", "import time\nt = time.process_time()\n"
                       "while time.process_time() - t < 0.5: pass"])
    busy.wait(timeout=60)
    ours.add(run)
    seen_by_others, seen_by_ours = others.cpus_used(), ours.cpus_used()
    assert seen_by_others is not None and seen_by_ours is not None
    assert seen_by_others > 0.3  # the unmeasured busy loop (and our run, not added there)
    assert seen_by_others - seen_by_ours > 0.1  # our own run is not counted as others'


def test_report_warns_when_the_machine_was_shared():
    spread = {"median": 1.0, "min": 0.9, "max": 1.1}
    row = {"wall_s": spread, "cpu_s": spread, "peak_mib": spread, "speed_vs_piper": spread, "peak_vs_piper": 1.0}
    whole = {"pairs": 3, "presets": {"fp32-cpu": row}, "piper_cli": row,
             "load_average": {"min": 0.2, "max": 1.6, "cpus": 2, "busy": True}}
    text = "\n".join(markdown_table(whole))
    assert "studio render --preset fp32-cpu" in text and "piper" in text and "machine was shared" in text
    whole["load_average"]["busy"] = False
    assert "machine was shared" not in "\n".join(markdown_table(whole))
