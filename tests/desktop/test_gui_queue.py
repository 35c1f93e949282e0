"""The render queue in the producer's day: no stall when an edit and a new take arrive
during a long chapter, the queue kept in the project across a restart (paused stays
paused), and the question on quitting with work outstanding.

Real widgets, real project files and SQLite, the real bundled voice through the
real model worker (the engine shared between tests only to save its load time).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import LONG_ONE
from support.gui import write_manuscript
from support.window import WAIT, make_window, open_and_wait, sentences, wait_jobs_done

from studio.project.queue_state import load_queue
from studio.project.store import Project
from studio.desktop.jobqueue import JobQueue
from studio.desktop.messages import JobSpec, QueueSnapshot
from support.gui import _running_spells

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _dirs(private_dirs: None) -> None:
    """Every test here gets its own state, config and cache folders."""


def test_a_job_that_steps_aside_never_goes_before_the_urgent_job_that_displaced_it() -> None:
    """The reported order: a finished job first in the list, a chapter running, an urgent edit."""
    q = JobQueue()
    early = q.submit(JobSpec("chapters", "Chapter 2", (1,), sentences_hint=3))
    assert q.next_job().job_id == early
    q.finish(early, "done")
    chapter = q.submit(JobSpec("chapters", "Chapter 1", (0,), sentences_hint=150))
    assert q.next_job().job_id == chapter
    edit = q.submit(JobSpec("sentences", "Edited sentence", sentence_ids=(7,), sentences_hint=1, urgent=True))
    assert q.control(chapter) == "yield"
    q.requeue(chapter)
    assert q.next_job().job_id == edit  # (it used to be the chapter again, for ever)
    take = q.submit(JobSpec("regenerate", "New take", sentence_ids=(8,), sentences_hint=1, urgent=True))
    assert q.control(edit) == "run"  # an urgent job never steps aside
    q.finish(edit, "done")
    assert q.next_job().job_id == take
    q.finish(take, "done")
    assert q.next_job().job_id == chapter and q.control(chapter) == "run"
    assert q.outstanding() == ((q.snapshot().job(chapter).spec,), False)


def test_edit_and_new_take_during_a_long_chapter_with_a_finished_job_listed(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    try:
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "books", LONG_ONE))
        session, model = win.session, win.book.model
        one, two = sentences(win, 0), sentences(win, 1)
        session.render_chapters([1])
        wait_jobs_done(qtbot, win)  # a finished job stays in the list, first
        seen: list[QueueSnapshot] = []
        session.queueChanged.connect(seen.append)
        chapter = session.render_chapters([0])
        qtbot.waitUntil(lambda: model.counts(0).get("done", 0) >= 2, timeout=WAIT)

        edited = two[1]
        win.book.select_sentence(edited.id)  # the producer edits it in the details pane: Save & re-render
        win.inspector.saveText.emit(edited.id, "We stayed inside by the fire.")
        qtbot.waitUntil(lambda: len(session.queue.snapshot().jobs) == 3, timeout=WAIT)
        win.takes.show_sentence(two[0].id, two[0].text)
        win.takes.new_btn.click()  # and a new take of another sentence
        qtbot.waitUntil(lambda: len(session.queue.snapshot().jobs) == 4, timeout=WAIT)
        jobs = session.queue.snapshot().jobs
        edit, take = (j.job_id for j in jobs if j.spec.urgent)
        qtbot.waitUntil(lambda: all(session.queue.snapshot().job(j).status == "done" for j in (edit, take)),
                        timeout=WAIT)
        with Project.open(session.snapshot.folder) as project:
            rows = {r.id: r for r in project.sentences([0, 1])}
        assert rows[edited.id].state == "done" and rows[edited.id].text == "We stayed inside by the fire."
        assert rows[two[0].id].synth_count == 2
        assert any(rows[s.id].state != "done" for s in one)  # neither waited for the chapter
        wait_jobs_done(qtbot, win)
        assert session.queue.snapshot().job(chapter).status == "done"  # the chapter resumed and finished
        # it stepped aside at most once per urgent job (the stall flipped it hundreds of times)
        assert 1 <= _running_spells(seen, chapter) <= 3
        assert model.counts(0) == {"pending": 0, "rendering": 0, "done": len(one), "failed": 0}
    finally:
        win.close()


def test_a_paused_queue_comes_back_after_quitting_and_discard_empties_it(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    open_and_wait(qtbot, win, write_manuscript(tmp_path / "books", LONG_ONE))
    folder = win.session.snapshot.folder
    win.queue.pause_btn.click()  # the producer pauses, then queues two chapters
    win.session.render_chapters([2])
    win.session.render_chapters([1])
    qtbot.waitUntil(lambda: len(win.queue.model.jobs) == 2 and win.queue.snapshot.paused, timeout=WAIT)
    labels = [j.spec.label for j in win.queue.model.jobs]

    win.actions_.named["quit"].trigger()  # File > Quit asks
    box = win.quit_guard.box
    qtbot.waitUntil(lambda: box is not None and box.isVisible(), timeout=WAIT)
    assert "2 render jobs" in box.text() and "paused" in box.text()
    box.button(box.StandardButton.Cancel).click()  # Cancel: nothing happens
    assert win.isVisible()
    win.actions_.named["quit"].trigger()
    qtbot.waitUntil(lambda: win.quit_guard.box.isVisible(), timeout=WAIT)
    win.quit_guard.later_btn.click()  # Finish later
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=WAIT)
    with Project.open(folder) as project:
        stored = load_queue(project.db)
    assert stored.paused and [j["label"] for j in stored.jobs] == labels

    again = make_window(qtbot, tmp_path)
    again.open_path(folder)
    qtbot.waitUntil(lambda: len(again.queue.model.jobs) == 2, timeout=WAIT)
    assert [j.spec.label for j in again.queue.model.jobs] == labels
    assert [j.spec.chapters for j in again.queue.model.jobs] == [(2,), (1,)]
    assert again.queue.snapshot.paused and again.queue.pause_btn.isChecked()
    assert all(j.status == "queued" for j in again.queue.model.jobs)  # paused: nothing ran

    again.actions_.named["quit"].trigger()
    qtbot.waitUntil(lambda: again.quit_guard.box is not None and again.quit_guard.box.isVisible(), timeout=WAIT)
    again.quit_guard.discard_btn.click()
    qtbot.waitUntil(lambda: not again.isVisible(), timeout=WAIT)
    with Project.open(folder) as project:
        assert load_queue(project.db).jobs == ()


def test_an_empty_queue_quits_without_a_question(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    open_and_wait(qtbot, win, write_manuscript(tmp_path / "books", LONG_ONE))
    win.actions_.named["quit"].trigger()
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=WAIT)
    assert win.quit_guard.box is None


def test_a_close_by_the_program_keeps_the_queue_without_asking(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """Ctrl-C in the terminal or a script closing the window: no question, the queue is kept."""
    win = make_window(qtbot, tmp_path)
    open_and_wait(qtbot, win, write_manuscript(tmp_path / "books", LONG_ONE))
    folder = win.session.snapshot.folder
    win.session.pause()
    win.session.render_chapters([1])
    qtbot.waitUntil(lambda: len(win.queue.model.jobs) == 1, timeout=WAIT)
    win.close()
    assert not win.isVisible() and win.quit_guard.box is None
    with Project.open(folder) as project:
        assert [tuple(j["chapters"]) for j in load_queue(project.db).jobs] == [(1,)]


def test_book_progress_shows_rendered_remaining_and_time_left_per_chapter_and_in_total(
        qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    try:
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "books", LONG_ONE))
        panel, model = win.progress, win.book.model
        chapters = len(model.snapshot.chapters)
        qtbot.waitUntil(lambda: panel.model.rowCount() == chapters + 1, timeout=WAIT)
        total = sum(len(c.sentences) for c in model.snapshot.chapters)
        assert panel.progress.rendered == 0 and panel.progress.remaining == total
        assert panel.table.isColumnHidden(3)  # no proof-listening yet: no "Proofed" column
        two = sentences(win, 1)
        win.session.render_chapters([1])
        wait_jobs_done(qtbot, win)
        qtbot.waitUntil(lambda: panel.progress.rendered == len(two), timeout=WAIT)
        row = [panel.cell(1, c) for c in range(5)]
        assert row[0] == "2. Two" and row[1] == f"{len(two)}/{len(two)}" and row[2] == "0" and row[4] == ""
        first = [panel.cell(0, c) for c in range(5)]
        assert first[2] == str(len(sentences(win, 0))) and first[4] not in ("", "estimating\u2026")  # speed measured
        last = [panel.cell(chapters, c) for c in range(5)]
        assert last[0].startswith("Book") and last[1] == f"{len(two)}/{total}" and last[2] == str(total - len(two))
        assert f"{len(two)} of {total} sentences rendered" in panel.summary.text()
    finally:
        win.close()
