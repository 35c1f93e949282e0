"""The desktop says which chapter is being heard and how far ("Proof-listening chapter 3: 40 %"), issue 45.

The proof step reports a frozen value per batch of one chapter's sentences; the Proof dock shows its words.
Real project, voice and recogniser; a real window for the dock.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.render import rendered_test_book
from support.window import make_window

from studio.project.store import Project
from studio.proof.check import Checker
from studio.proof.sentences import ProofProgress
from studio.rendering.proofing import ChapterProofer


def test_the_words_say_the_chapter_and_how_far() -> None:
    assert ProofProgress(8, 20, 1, chapter=2, chapter_done=8, chapter_total=20).words() == \
        "Proof-listening chapter 3: 40 %"
    assert ProofProgress(5, 20, 0).words() == "Proof-listening: 25 %"


def test_each_chapter_heard_reports_its_progress(tmp_path: Path) -> None:
    folder = rendered_test_book(tmp_path / "book.studio")
    seen: list[ProofProgress] = []
    with Project.open(folder) as project:
        checker = Checker.open()
        proofer = ChapterProofer(project, lambda: checker, overlap=False, progress=seen.append)
        chapters = len(project.chapters())
        for chapter in range(chapters):
            proofer(chapter)
        proofer.wait()
    words = [p.words() for p in seen]
    assert words[-1] == f"Proof-listening chapter {chapters}: 100 %", words
    assert "Proof-listening chapter 1: 100 %" in words, words
    assert all(isinstance(p, ProofProgress) and p.chapter is not None for p in seen)


def test_the_dock_shows_the_chapter_being_heard(qtbot, tmp_path: Path,  # noqa: ANN001
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    win = make_window(qtbot, tmp_path)
    win.proof_ctl.progress.emit(ProofProgress(8, 20, 1, chapter=2, chapter_done=8, chapter_total=20))
    qtbot.waitUntil(lambda: win.proof.summary.full_text == "Proof-listening chapter 3: 40 % (1 to review so far)",
                    timeout=5_000)
