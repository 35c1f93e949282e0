"""The GPU check's results: JSON rows written as they happen, one summary table, one verdict.

Why row by row: a GPU machine is lent for minutes; if the check is killed at its
time limit, every row finished before that is already on disk, and the summary
(:func:`summary_table`, printed by the shell script whether or not the check
finished) says what ran and what did not. A run passes only when every row is
``ok`` (or ``info``) and the final ``done`` row is there: a skip, a failure, an
error or a timeout all make the exit status non-zero.

Standard library only: the shell script runs this module even when the check
itself could not start.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable

ROWS_FILE = "gpu_check.jsonl"
#: statuses that fail the run
FAILING = frozenset({"fail", "skip", "error", "timeout"})
#: ``unavailable`` is a preset this machine cannot run (TensorRT absent): reported with
#: its reason; it fails the run only with ``--require-tensorrt``
STATUSES = frozenset({"ok", "info", "unavailable"}) | FAILING


class RowWriter:
    """Appends one JSON object per line to ``path`` and makes it durable at once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
        self.rows: list[dict[str, Any]] = []

    def add(self, check: str, status: str, figures: str = "", **detail: Any) -> dict[str, Any]:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        row = {"check": check, "status": status, "figures": figures, **detail}
        self.rows.append(row)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        print(f"[{status:>11}] {check}: {figures}", flush=True)
        return row


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows written so far (a last line cut by a kill is ignored)."""
    rows = []
    if not path.is_file():
        return rows
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            break
    return rows


def verdict(rows: Iterable[dict[str, Any]], *, require_tensorrt: bool = False) -> tuple[int, list[str]]:
    """``(exit status, reasons)``: 0 only when nothing failed, skipped or ran out of time."""
    rows = list(rows)
    reasons = [f"{r['check']}: {r['status']}" for r in rows if r.get("status") in FAILING]
    if require_tensorrt:
        reasons += [f"{r['check']}: unavailable (--require-tensorrt)" for r in rows if r.get("status") == "unavailable"]
    if not any(r.get("check") == "done" for r in rows):
        reasons.append("the check did not finish (killed at its time limit, or crashed): see the log")
    return (1 if reasons else 0), reasons


def summary_table(rows: Iterable[dict[str, Any]]) -> str:
    """One plain-text table: check, status, figures."""
    rows = [r for r in rows if r.get("check") != "done"]
    width = max([len(r["check"]) for r in rows] + [5])
    lines = [f"{'check':<{width}}  {'status':<11}  figures", f"{'-' * width}  {'-' * 11}  {'-' * 40}"]
    for r in rows:
        lines.append(f"{r['check']:<{width}}  {r['status']:<11}  {r.get('figures', '')}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m studio.measure.gpu.rows",
                                     description="summary table and exit status of a GPU check run")
    parser.add_argument("out", type=Path, help="the check's output folder")
    parser.add_argument("--require-tensorrt", action="store_true")
    args = parser.parse_args(argv)
    rows = read_rows(args.out / ROWS_FILE)
    print(summary_table(rows))
    status, reasons = verdict(rows, require_tensorrt=args.require_tensorrt)
    done = next((r for r in rows if r.get("check") == "done"), None)
    if done is not None:
        print(f"\nfinished in {done.get('elapsed_s', '?')} s; rows in {args.out / ROWS_FILE}")
    print("RESULT: " + ("PASS" if status == 0 else "FAIL -- " + "; ".join(reasons)))
    return status


if __name__ == "__main__":
    sys.exit(main())
