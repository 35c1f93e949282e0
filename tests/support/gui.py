"""Helpers for the GUI tests (no tests in here).

The voice is the real bundled one, loaded once per test process and lent to each
session's worker through :class:`SharedEngine` (whose ``close`` keeps it loaded);
the worker, queue, render loop, cache and database all run for real. Playback
uses :class:`~studio.desktop.sinks.NullSink`, a real consumer without a sound card.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
import studio.desktop  # noqa: F401 - the binding guard, before any Qt call
from studio.engine.base import DelegatingEngine, Engine

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "resources" / "sample.md"

TINY = """# Tiny Book

## One

The cat sat down. It was warm. The sun was out. A bird sang. The day went on. Then it was night.

## Two

Rain fell on the roof. We stayed in.

## Three

Le chat dort. Il fait beau aujourd'hui dans le jardin, et les oiseaux chantent dans les arbres du parc.
"""


from support.voice import bundled_engine  # noqa: E402 - the one shared bundled voice
import wave  # noqa: E402

from studio.delivery.export import export_chapter_files  # noqa: E402
from studio.project.store import Project  # noqa: E402
from studio.desktop.messages import QueueSnapshot  # noqa: E402


class SharedEngine(DelegatingEngine):
    """The process-wide bundled engine, counting what it is asked to say."""

    name = "onnx"

    def __init__(self, inner: Engine) -> None:
        super().__init__(inner)
        self.name = "onnx"
        self.spoken: list[str] = []
        self.lexicons: list = []

    def text_to_ids(self, text: str, language: str, lexicon=None) -> list[int]:  # noqa: ANN001 - a Lexicon
        self.spoken.append(text)
        self.lexicons.append(lexicon)
        return self.inner.text_to_ids(text, language, lexicon)


def shared_factory(log: list[SharedEngine] | None = None):  # noqa: ANN201
    def make(plan) -> Engine:  # noqa: ANN001 - an EnginePlan, planned exactly as the app plans it
        engine = SharedEngine(bundled_engine())
        if log is not None:
            log.append(engine)
        return engine

    return make


def write_manuscript(folder: Path, text: str = TINY, name: str = "tiny.md") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def copy_sample(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(SAMPLE, folder / SAMPLE.name))


def ffprobe(path: Path) -> str:
    return subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels", str(path)],
        capture_output=True, text=True, check=True,
    ).stdout


#: chapter one long enough (about 2 spoken minutes) to be flagged at a 1-minute threshold
LONG_ONE = TINY.replace("Then it was night.", "Then it was night. " + " ".join(
    f"The keeper counted the boats in the harbour again, number {n}." for n in range(1, 30)))


FRONT = TINY.replace("## One", "## Dedication\n\nFor the keepers of every light.\n\n## One")


BOOK = """# Pause Book

## One

The cat sat down. It was warm. The sun was out. A bird sang. The day went on. Then it was night.

## Two

Rain fell on the roof. We stayed in.
"""


def exported_seconds(folder: str, out: Path) -> float:
    with Project.open(folder) as project:
        files = export_chapter_files(project, out, "wav", [0])
    with wave.open(str(files[0].path)) as w:
        return w.getnframes() / w.getframerate()


def _running_spells(seen: list[QueueSnapshot], job_id: int) -> int:
    """How many times the job started running (queued -> running)."""
    spells, before = 0, None
    for snap in seen:
        job = snap.job(job_id)
        status = job.status if job is not None else None
        if status == "running" and before != "running":
            spells += 1
        before = status
    return spells
