"""One estimate of the book's length and of the render's time (issue 41, point 3).

Render Book said "about 17 h 56 min of audio", the tree's chapters added up to 18 h 53 min and
``studio inspect`` said 19:34:04; after reopening, "Estimated time: not known yet" with hundreds
of sentences rendered."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import FRONT, write_manuscript
from support.render import studio_cmd
from support.window import WAIT, open_and_wait, wait_jobs_done

from studio.cli.common import format_duration
from studio.desktop.planning import plan_book
from studio.project.duration import book_seconds, chapter_estimates
from studio.project.render_speed import seconds_per_sentence
from studio.project.store import Project
from studio.ui.confirm import book_render_text
from studio.ui.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("private_dirs")  # no benchmark of the user's: the project's own figure


def test_the_book_question_the_tree_and_inspect_give_one_length(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", FRONT))
    snap = window.session.snapshot
    assert not snap.chapters[0].included  # the dedication: front matter, left out
    tree = sum(c.estimated_s for c in snap.chapters if c.included)
    plan = plan_book(snap, None, None)
    assert plan.audio_s == pytest.approx(tree) and plan.left_s < plan.audio_s  # pauses are part of the book
    with Project.open(snap.folder) as project:
        store = book_seconds(zip(chapter_estimates(project), (c.included for c in project.chapters())))
    assert store == pytest.approx(plan.audio_s, abs=0.01)
    out = studio_cmd("inspect", snap.folder).stdout
    assert f"the book about {format_duration(plan.audio_s)} (" in out  # and, apart, with every chapter
    manuscript = studio_cmd("inspect", str(tmp_path / "books" / "tiny.md")).stdout
    assert f"the book about {format_duration(plan.audio_s)} (" in manuscript  # the file before its project: the same


def test_a_reopened_project_knows_its_render_speed(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    book = write_manuscript(tmp_path / "books", FRONT)
    open_and_wait(qtbot, window, book)
    session = window.session
    session.render_chapters([2])  # "Two": two sentences
    wait_jobs_done(qtbot, window)
    folder = session.snapshot.folder
    with Project.open(folder) as project:
        measured = seconds_per_sentence(project.db, "fp32-cpu", project.settings().voice_id)  # the default preset
    assert measured is not None and measured > 0
    session.close_project()
    session.stats = type(session.stats)()  # a new start of the app: nothing measured in memory
    window.open_path(folder)
    qtbot.waitUntil(lambda: session.snapshot is not None, timeout=WAIT)
    assert session.stats.seconds_per_sentence() == pytest.approx(measured)
    plans: list = []
    session.plan_book(plans.append)
    qtbot.waitUntil(lambda: bool(plans), timeout=WAIT)
    _head, detail = book_render_text(plans[0])
    assert "not known yet" not in detail and "at this project's measured speed" in detail
