"""Helpers shared by the project/audio/render/CLI tests (no tests in here).

The engine is the real bundled voice; ``CountingEngine`` wraps it only to count
and, on request, fail -- the render job and the project store, which are what the
tests exercise, run unmodified.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.core.lexicon import Lexicon
from studio.core.types import Book, Chapter, Paragraph, Sentence
from studio.engine.base import DelegatingEngine, Engine, SynthesisSettings

REPO = Path(__file__).resolve().parents[2]


def para(*sentences: str, lang: str = "en") -> Paragraph:
    sents = tuple(
        Sentence(text=s, language=lang, trailing=" " if i < len(sentences) - 1 else "")
        for i, s in enumerate(sentences)
    )
    return Paragraph(text="".join(s.text + s.trailing for s in sents), sentences=sents, language=lang, confidence=0.99)


def make_book() -> Book:
    """Two short chapters, five spoken units each (title included)."""
    return Book(
        title="Test Book",
        author="Ann Author",
        language="en",
        chapters=(
            Chapter("Morning", (para("The sun came up.", "Birds sang."), para("Tea was hot.", "We sat."))),
            Chapter("Evening", (para("It got dark."), para("Stars came out.", "We slept."), para("* * *"))),
        ),
        source="memory",
        metadata={"k": "v"},
    )


def real_engine() -> Engine:
    """The bundled voice, shared by the whole test process (tests/support/voice.py)."""
    from support.voice import bundled_engine

    return bundled_engine()


def rendered_test_book(folder: Path) -> Path:
    """The two-chapter test book as a project in ``folder``, rendered with the bundled voice."""
    from studio.engine.voice.catalog import get_voice
    from studio.rendering.render import render_project
    from studio.project.opening import new_project_settings
    from studio.project.store import Project

    with Project.create(folder, make_book(), new_project_settings(get_voice(None))) as proj:
        render_project(proj, real_engine())
    return folder


class CountingEngine(DelegatingEngine):
    """Delegates to a real engine; records every sentence it is asked to speak and
    how many sentences each synthesis call carried (``calls``)."""

    name = "onnx"

    def __init__(self, inner: Engine, fail_on: str | None = None) -> None:
        super().__init__(inner)
        self.name = "onnx"
        self.fail_on = fail_on
        self.spoken: list[str] = []
        self.calls: list[int] = []

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        self.calls.append(len(ids))
        return super().synthesize_batch(ids, settings)

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        """Every sentence the render loop speaks passes here exactly once."""
        self.spoken.append(text)
        if self.fail_on and self.fail_on in text:
            raise EngineError(f"refusing to say {text!r}")
        return super().text_to_ids(text, language, lexicon)


def studio_cmd(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """Run ``python -m studio ARGS`` for real, capturing text output."""
    return subprocess.run(
        [sys.executable, "-m", "studio", *args], capture_output=True, text=True, cwd=kwargs.pop("cwd", REPO),
        timeout=kwargs.pop("timeout", 120), **kwargs,
    )


def ffprobe_duration(path: Path) -> float:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
        capture_output=True, text=True, check=True,
    )
    return float(out.stdout.strip())
