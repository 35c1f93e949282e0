"""What every ``studio`` command shares: exit codes, messages, tables, durations,
chapter lists and the progress line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence, TextIO

from studio.core.errors import StudioError

EXIT_ERROR = 2
#: the job finished but part of it did not (failed sentences, presets not measured)
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130
INTERRUPTED_MESSAGE = "interrupted; finished sentences are kept, run the same command to resume"
RETRY_MESSAGE = "run the same command again to retry the failed sentences (finished ones are kept)"


def format_duration(seconds: float) -> str:
    """``h:mm:ss`` or ``m:ss`` (whole seconds)."""
    total = int(round(max(0.0, seconds)))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def parse_chapters(spec: str, count: int) -> list[int]:
    """``"1,3-5"`` (1-based, as ``studio inspect`` numbers them) -> sorted 0-based indices."""
    picked: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        try:
            lo, _, hi = part.partition("-")
            first, last = int(lo), int(hi) if hi else int(lo)
        except ValueError:
            raise StudioError(f"bad --chapters value '{spec}'; use numbers and ranges like 1,3-5") from None
        if first > last:
            raise StudioError(f"bad chapter range '{part}' in --chapters (start after end)")
        for n in range(first, last + 1):
            if not 1 <= n <= count:
                raise StudioError(f"chapter {n} does not exist (the book has {count} chapters)")
            picked.add(n - 1)
    if not picked:
        raise StudioError(f"bad --chapters value '{spec}'; use numbers and ranges like 1,3-5")
    return sorted(picked)


def print_table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        out.write("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")


class ProgressLine:
    """Render progress on stderr: one rewritten ``\\r`` line on a terminal, plain
    lines (every 10 % or 15 s) when redirected to a file or pipe."""

    def __init__(self, stream: TextIO, *, label: str = "rendering") -> None:
        self.stream = stream
        self.label = label
        self.tty = stream.isatty()
        self.last_step = -1
        self.last_time = 0.0
        self.open_line = False

    def __call__(self, p) -> None:  # p: studio.rendering.render.RenderProgress
        pct = int(100 * p.fraction)
        bar = "#" * (pct // 5) + "." * (20 - pct // 5)
        eta = f"eta {format_duration(p.eta)}" if p.eta is not None else "eta --:--"
        text = f"{self.label} {pct:3d}% [{bar}] {p.done + p.failed}/{p.total} sentences  {eta}"
        if p.failed:
            text += f"  {p.failed} failed"
        if self.tty:
            self.stream.write("\r" + text.ljust(78)[:120])
            self.stream.flush()
            self.open_line = True
            return
        now = time.monotonic()
        step = pct // 10
        if step != self.last_step or now - self.last_time >= 15:
            self.stream.write(text + "\n")
            self.stream.flush()
            self.last_step, self.last_time = step, now

    def finish(self) -> None:
        if self.open_line:
            self.stream.write("\n")
            self.stream.flush()
            self.open_line = False


def require_file(path: Path) -> None:
    if not path.exists():
        raise StudioError(f"{path}: no such file")
    if path.is_dir():
        raise StudioError(f"{path} is a folder, not a manuscript file")
