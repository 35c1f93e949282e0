"""Helpers for the takes and chapter-export tests: render with the shared voice, read files back (no tests in here)."""

from __future__ import annotations

import hashlib
import wave
from pathlib import Path

from support.voice import bundled_engine

from studio.rendering.render import render_project
from studio.project.store import Project


def render(project: Project, ids: set[int] | None = None, chapters: set[int] = frozenset({1})) -> None:
    render_project(project, Lent(bundled_engine()), chapters=set(chapters), sentence_ids=ids)


class Lent:
    """The shared engine without its ``close`` (the render loop closes what it is given)."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def close(self) -> None:
        pass


def pcm(path: Path) -> bytes:
    with wave.open(str(path)) as w:
        return w.readframes(w.getnframes())


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


FRONT = """# Tiny Book

## Dedication

For the keepers of every light.

## One

The cat sat down. It was warm.

## Two

Rain fell on the roof.

## Three

We stayed in.
"""
