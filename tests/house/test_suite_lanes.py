"""The test command's lanes (``tests/lanes.py``): every file run once, in batches that start fresh,
a passed batch's files removed, and a failing batch fails the run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

import lanes  # noqa: E402  (a script beside the suite, not a package)

SMALL = ["tests/core/test_system.py", "tests/house/test_portable.py"]


def test_every_file_runs_once_in_batches_of_about_the_budget() -> None:
    files = lanes.test_files()
    assert "tests/desktop/test_walkthrough.py" not in files  # run apart, in a real X server
    costs = lanes.read_costs()
    batches = lanes.plan(files, costs, budget=150)
    planned = [f for b in batches for f in b.files]
    assert sorted(planned) == files and len(planned) == len(set(planned))
    for b in batches:
        assert b.cost <= 150 or len(b.files) == 1  # a file never split, a batch never padded past it
        assert {lanes.is_heavy(f) for f in b.files} == {b.heavy}  # torch files never beside others
    assert [b.cost for b in batches] == sorted((b.cost for b in batches), reverse=True)
    assert any(b.heavy for b in batches) and "tests/engine/test_coqui.py" in [f for b in batches if b.heavy
                                                                               for f in b.files]


def test_a_file_the_costs_have_not_seen_is_guessed_by_its_tests() -> None:
    path = "tests/core/test_system.py"
    assert lanes.guessed_cost(path) == 4 * lanes.UNSEEN_PER_TEST
    assert lanes.plan([path], {}, budget=1)[0].cost == lanes.guessed_cost(path)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "tests" / "lanes.py"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_two_lanes_run_real_files_and_report_their_cost(tmp_path: Path) -> None:
    costs = tmp_path / "costs.tsv"
    done = run("--budget", "0", "--costs-out", str(costs), *SMALL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(" passed") >= 2 and "2 batches in 2 lanes" in done.stdout
    summary = done.stdout.strip().splitlines()[-1]
    assert summary.startswith("suite: 2 batches") and "MB in one test process" in summary
    assert "GB at the lowest" in summary  # a full disk fails batches with empty logs: the run says how full
    logs = Path(done.stdout.splitlines()[0].split("logs in ")[1])
    assert sorted(p.name for p in logs.iterdir()) == ["batch-01.log", "batch-02.log", "cost-log.tsv"]
    assert sorted(line.split("\t")[1] for line in costs.read_text().splitlines()[1:]) == SMALL


def test_a_failing_batch_fails_the_run_and_says_which() -> None:
    done = run(SMALL[0], "--", "-k", "test_the_readings_are_plausible", "--no-such-option")
    assert done.returncode == 1
    assert "batch 1 failed" in done.stdout and "no-such-option" in done.stdout
