"""A chapter is heard back while the book renders: its proof results are there before the next
chapter's render ends, from ``studio render --proof`` and in the desktop.

Real voice, real embedded Whisper base, a two-chapter manuscript rendered in one job (the desktop's
side: tests/desktop/test_proof_while_rendering.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.render import studio_cmd
from support.takes import Lent
from support.voice import DETERMINISTIC, bundled_engine

from studio.engine.voice.catalog import get_voice
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.proofs import UNCHECKED, results
from studio.proof.check import Checker
from studio.rendering.proofing import ChapterProofer
from studio.rendering.render import render_project

pytestmark = pytest.mark.slow

BOOK = ("# Chapter One\n\nThe boat left the harbour at dawn. The gulls followed it out to sea.\n\n"
        "# Chapter Two\n\nBy noon the wind had turned. The crew pulled in the sails.\n")


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))


def test_render_proof_reports_each_chapter_before_the_next_is_rendered(tmp_path: Path) -> None:
    book = write_manuscript(tmp_path / "books", BOOK, "boat.md")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    proc = studio_cmd("render", str(book), "-o", str(tmp_path / "out"), "--format", "wav", "--chapters", "1-2",
                      "--proof", "--retry", "0", "--in-process", env=env, timeout=600)
    assert proc.returncode in (0, 3), proc.stderr[-2000:]
    err = proc.stderr
    heard_1 = err.find('chapter 1 "Chapter One" heard back:')
    rendered_2 = err.find('chapter 2 "Chapter Two" rendered')
    heard_2 = err.find('chapter 2 "Chapter Two" heard back:')
    assert heard_1 >= 0 and rendered_2 >= 0 and heard_2 >= 0, err[-2000:]
    assert heard_1 < rendered_2 < heard_2, err[-2000:]
    assert "4 sentence(s) listened to" in proc.stdout or "sentence(s) listened to" in proc.stdout, proc.stdout


@pytest.mark.parametrize("overlap", [True, False])
def test_a_chapter_is_heard_before_the_next_counts_as_rendered(tmp_path: Path, overlap: bool) -> None:
    """Both orders of work: heard alongside the next chapter's render (a GPU, 4+ cores) or before it."""
    book = write_manuscript(tmp_path / "books", BOOK, "boat.md")
    settings = new_project_settings(get_voice(None)).with_changes(synthesis=DETERMINISTIC)
    project = open_for_manuscript(book, tmp_path / "boat.studio", settings).project
    seen: list[tuple[str, int, bool]] = []

    def heard_before(chapter: int) -> bool:
        rows = project.sentences([chapter - 1]) if chapter else []
        verdicts = results(project.db, rows)
        return all(verdicts[r.id].status != UNCHECKED for r in rows)

    proofer = ChapterProofer(project, Checker.open, overlap=overlap,
                             rendered=lambda c: seen.append(("rendered", c, heard_before(c))),
                             heard=lambda h: seen.append(("heard", h.chapter, True)))
    try:
        render_project(project, Lent(bundled_engine()), on_chapter=proofer)
        proofer.wait()
        assert [s[:2] for s in seen if s[0] == "rendered"] == [("rendered", 0), ("rendered", 1)]
        assert all(before for _what, _c, before in seen), seen  # chapter 1 had its verdicts when 2 was done
        assert seen.index(("heard", 0, True)) < seen.index(("rendered", 1, True)), seen
        assert len(proofer.verdicts) == len(project.sentences())
    finally:
        proofer.close()
        project.close()
