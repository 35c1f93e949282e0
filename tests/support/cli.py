"""Helpers for tests that run ``studio`` as a subprocess on a small book and read its database (no tests in here)."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import time
from pathlib import Path

WORDS = [
    "apple", "river", "candle", "mountain", "window", "garden", "pencil", "harbor", "violin", "lantern",
    "meadow", "copper", "blanket", "thunder", "compass", "orchard", "ribbon", "saddle", "marble", "feather",
    "kettle", "anchor", "basket", "cobweb",
]


def write_manuscript(path: Path, sentences: int = 22, chapters: int = 2) -> Path:
    """A small Markdown book of short, all-different sentences."""
    per = -(-sentences // chapters)
    lines = ["# Resume Test", ""]
    n = 0
    for c in range(chapters):
        lines += [f"## Part {c + 1}", ""]
        para: list[str] = []
        for _ in range(per):
            if n >= sentences:
                break
            para.append(f"The {WORDS[n % len(WORDS)]} was quiet today.")
            n += 1
            if len(para) == 3:
                lines += [" ".join(para), ""]
                para = []
        if para:
            lines += [" ".join(para), ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def db_rows(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def wait_for_done(db: Path, proc: subprocess.Popen, at_least: int, timeout: float = 90) -> int:
    """Poll the project database until ``at_least`` sentences are done."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "render finished before it could be interrupted"
        if db.exists():
            try:
                done = db_rows(db, "SELECT count(*) FROM sentences WHERE state = 'done'")[0][0]
            except sqlite3.Error:
                done = 0
            if done >= at_least:
                return done
        time.sleep(0.05)
    raise AssertionError(f"no {at_least} sentences done within {timeout} s")


def done_snapshot(project: Path) -> dict[int, tuple]:
    """Done sentences -> (key, synth_count, inode, mtime_ns); checks every file's checksum."""
    snap = {}
    for sid, key, checksum, count in db_rows(
        project / "project.sqlite", "SELECT id, cache_key, checksum, synth_count FROM sentences WHERE state = 'done'"
    ):
        path = project / "cache" / key[:2] / f"{key}.wav"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == checksum
        st = path.stat()
        snap[sid] = (key, count, st.st_ino, st.st_mtime_ns)
    return snap
