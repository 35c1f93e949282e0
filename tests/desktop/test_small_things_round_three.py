"""The small things that made a producer doubt the tool (issue 32, point 5), each on real widgets:
a new pronunciation queues what it says will render again, the import's progress moves through a
long book's language detection, "Discard queue" leaves the next render free to run, a new project
is made at the latest schema in one log line, and the words a producer reads."""

from __future__ import annotations

import logging
from pathlib import Path

from support.gui import TINY, write_manuscript
from support.window import WAIT, big_book, make_window, open_and_wait, sentences, wait_jobs_done

from studio.project.store import Project
from studio.desktop.sinks import NO_DEVICE, output_device_problem
from studio.ui.lexicon_panel import open_lexicon_dialog
from studio.ui.main_window import MainWindow


def test_a_new_pronunciation_queues_the_sentences_it_says_will_render_again(qtbot, window: MainWindow,  # noqa: ANN001, F811
                                                                             tmp_path: Path) -> None:
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books"))
    session = window.session
    session.render_chapters([0])  # "The cat sat down." ... rendered; the other chapters not
    wait_jobs_done(qtbot, window)
    cat = next(s for s in sentences(window, 0) if "cat" in s.text)
    old_key = cat.cache_key
    jobs_before = len(window.queue.snapshot.jobs)
    dlg = open_lexicon_dialog(window)
    dlg.word.setText("cat")
    dlg.value.setText("kat")
    with qtbot.waitSignal(dlg.changed, timeout=WAIT):  # saved off the GUI thread
        assert dlg.save_entry()
    assert "1 sentence queued to render again" in dlg.message.text()
    qtbot.waitUntil(lambda: len(window.queue.snapshot.jobs) == jobs_before + 1, timeout=WAIT)
    assert window.queue.snapshot.jobs[-1].spec.sentence_ids == (cat.id,)  # what it said, nothing else
    wait_jobs_done(qtbot, window)
    with Project.open(session.snapshot.folder) as project:
        row = next(r for r in project.sentences([0]) if r.id == cat.id)
    assert row.state == "done" and row.cache_key == row.expected_key != old_key  # said the new way
    dlg.close()


def test_import_progress_moves_through_language_detection(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001, F811
    book = write_manuscript(tmp_path / "books", big_book(chapters=24, paragraphs=4), "long.md")
    steps: list = []
    window.importer.start(book, tmp_path / "projects" / "long.studio")
    window.importer.watch.stepped.connect(steps.append)
    qtbot.waitUntil(lambda: window.session.snapshot is not None, timeout=WAIT)
    stages = [(s.stage, s.done) for s in steps]
    first_split = next(i for i, (stage, _) in enumerate(stages) if stage == "Splitting sentences")
    detecting = [done for stage, done in stages[:first_split] if stage == "Detecting languages"]
    assert detecting == list(range(24))  # the bar moves chapter by chapter before the first chapter's sentences
    assert "Choosing each passage's language" in dict(stages) and steps[-1].stage == "Saving the project"


def test_after_discard_queue_the_next_render_runs(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    open_and_wait(qtbot, win, write_manuscript(tmp_path / "books"))
    folder = win.session.snapshot.folder
    win.queue.pause_btn.click()
    win.session.render_chapters([2])
    qtbot.waitUntil(lambda: len(win.queue.model.jobs) == 1 and win.queue.snapshot.paused, timeout=WAIT)
    win.actions_.named["quit"].trigger()
    qtbot.waitUntil(lambda: win.quit_guard.box is not None and win.quit_guard.box.isVisible(), timeout=WAIT)
    assert "1 render job (3 sentences left), paused, not finished." in win.quit_guard.box.text()
    win.quit_guard.discard_btn.click()
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=WAIT)

    again = make_window(qtbot, tmp_path)
    try:
        open_and_wait(qtbot, again, Path(folder))
        assert not again.queue.snapshot.paused and not again.queue.pause_btn.isChecked()
        again.session.render_chapters([2])  # runs now, without Resume
        wait_jobs_done(qtbot, again)
        assert again.queue.snapshot.jobs[-1].status == "done"
    finally:
        again.close()


def test_a_new_project_is_made_at_the_latest_schema_in_one_line(qtbot, window: MainWindow, tmp_path: Path,  # noqa: ANN001, F811
                                                                 caplog) -> None:  # noqa: ANN001
    caplog.set_level(logging.INFO, logger="studio.project.schema")
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", TINY, "fresh.md"))
    lines = [r.getMessage() for r in caplog.records if r.name == "studio.project.schema" and r.levelno >= logging.INFO]
    assert not [m for m in lines if "migrating" in m], lines
    assert len([m for m in lines if m.startswith("new project")]) == 1


def test_no_sound_device_in_a_producers_words(qtbot, window: MainWindow) -> None:  # noqa: ANN001, F811
    problem = output_device_problem()
    if problem is None:
        import pytest

        pytest.skip("this machine has a sound output device")
    assert problem in (NO_DEVICE, "No sound output: the sound library (PortAudio) is not installed.")
    qtbot.waitUntil(lambda: window.audio_problem is not None, timeout=WAIT)
    assert window.audio_label.text().startswith("No sound output") and "querying" not in window.audio_label.toolTip()
