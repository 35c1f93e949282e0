"""The review bench in the main window: state shown after a new threshold, queue priority,
the Render Book confirmation.

Real widgets, real project files and SQLite, the real bundled voice through the
real model worker (shared between tests only to save its load time).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from support.gui import TINY, write_manuscript
from support.window import WAIT, big_book, make_window, open_and_wait, sentences, visible_rows, wait_jobs_done

from studio.desktop.monitor import AnswerProbe
from studio.project.store import Project
from studio.ui.main_window import MainWindow
from support.gui import FRONT, LONG_ONE


pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]


def state_cell(win: MainWindow, sentence_id: int) -> str:
    return str(win.book.model.sentence_index(sentence_id).siblingAtColumn(2).data())


def test_new_long_chapter_threshold_keeps_rendered_states_and_updates_the_banner(
        qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", LONG_ONE))
    book, model, session = window.book, window.book.model, window.session
    book.long_minutes.setValue(1)
    qtbot.waitUntil(lambda: "Chapter 1 " in book.summary.full_text, timeout=5000)
    assert "long" in str(model.index(0, 3).data())

    two = sentences(window, 1)
    session.render_chapters([1])
    wait_jobs_done(qtbot, window)
    edited = two[-1]
    assert model.setData(model.sentence_index(edited.id), "We stayed in all day.")
    qtbot.waitUntil(lambda: len(session.queue.snapshot().jobs) == 2 and not session.queue.snapshot().active,
                    timeout=WAIT)
    qtbot.waitUntil(lambda: state_cell(window, edited.id) == "done", timeout=WAIT)
    book.tree.expand(book.proxy.mapFromSource(model.index(1, 0)))
    book.select_sentence(two[0].id)

    book.long_minutes.setValue(5)  # what the producer did: the threshold changed after a render
    qtbot.waitUntil(lambda: model.snapshot.long_chapter_minutes == 5, timeout=5000)
    total = len(two)
    assert str(model.index(1, 2).data()).split(";")[0] == f"{total}/{total} rendered"  # then the proof state
    assert all(state_cell(window, s.id) == "done" for s in two)
    assert model.sentence(edited.id).text == "We stayed in all day."
    assert "long" not in str(model.index(0, 3).data())
    assert "Chapter 1 " not in book.summary.full_text  # the banner follows the threshold
    assert book.tree.isExpanded(book.proxy.mapFromSource(model.index(1, 0)))  # the tree is not rebuilt
    assert getattr(book.node_at(book.tree.currentIndex()), "id", None) == two[0].id

    book.long_minutes.setValue(1)
    qtbot.waitUntil(lambda: "Chapter 1 " in book.summary.full_text, timeout=5000)
    assert str(model.index(1, 2).data()).split(";")[0] == f"{total}/{total} rendered"  # then the proof state
    with Project.open(session.snapshot.folder) as project:  # what is shown is what is stored
        assert all(r.state == "done" for r in project.sentences([1]))


def test_urgent_jobs_go_first_and_a_running_chapter_steps_aside() -> None:
    from studio.desktop.jobqueue import JobQueue
    from studio.desktop.messages import JobSpec

    q = JobQueue()
    a = q.submit(JobSpec("chapters", "A", (0,), sentences_hint=150))
    b = q.submit(JobSpec("chapters", "B", (1,), sentences_hint=30))
    assert q.next_job().job_id == a and q.control(a) == "run"
    e1 = q.submit(JobSpec("sentences", "edit 1", sentence_ids=(7,), sentences_hint=1, urgent=True))
    e2 = q.submit(JobSpec("sentences", "edit 2", sentence_ids=(8,), sentences_hint=1, urgent=True))
    assert [j.job_id for j in q.snapshot().jobs] == [a, e1, e2, b]  # urgent ones in their order, before B
    assert q.control(a) == "yield"
    q.requeue(a)
    assert [j.job_id for j in q.snapshot().jobs] == [e1, e2, a, b]  # A resumes first after them
    assert q.next_job().job_id == e1 and q.control(e1) == "run"  # an urgent job never yields
    q.finish(e1, "done")
    assert q.next_job().job_id == e2
    q.finish(e2, "done")
    assert q.next_job().job_id == a and q.control(a) == "run"
    q.pause()
    q.submit(JobSpec("sentences", "edit 3", sentence_ids=(9,), sentences_hint=1, urgent=True))
    assert q.control(a) == "pause"  # a pause wins over priority


def test_edited_sentence_renders_before_the_running_chapter_finishes(qtbot, window: MainWindow,  # noqa: ANN001
                                                                      tmp_path: Path) -> None:
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", LONG_ONE))
    session, model = window.session, window.book.model
    one, two = sentences(window, 0), sentences(window, 1)
    chapter = session.render_chapters([0])
    qtbot.waitUntil(lambda: model.counts(0).get("done", 0) >= 2, timeout=WAIT)
    target = two[1]
    session.edit_sentence(target.id, "We stayed inside by the fire.")
    qtbot.waitUntil(lambda: len(session.queue.snapshot().jobs) == 2, timeout=WAIT)
    edit = max(j.job_id for j in session.queue.snapshot().jobs)
    assert session.queue.snapshot().job(edit).spec.urgent
    qtbot.waitUntil(lambda: session.queue.snapshot().job(edit).status == "done", timeout=WAIT)
    with Project.open(session.snapshot.folder) as project:
        rows = {r.id: r for r in project.sentences([0, 1])}
    assert rows[target.id].state == "done" and rows[target.id].text == "We stayed inside by the fire."
    left = sum(1 for s in one if rows[s.id].state != "done")
    assert left > 0  # it did not wait for the chapter
    assert session.queue.snapshot().job(chapter).status in ("queued", "running")
    wait_jobs_done(qtbot, window)
    assert session.queue.snapshot().job(chapter).status == "done"  # it carried on, not cancelled
    assert model.counts(0) == {"pending": 0, "rendering": 0, "done": len(one), "failed": 0}
    assert all(state_cell(window, s.id) == "done" for s in one)


def test_render_book_asks_once_with_count_time_and_left_out_chapters(qtbot, window: MainWindow,  # noqa: ANN001
                                                                     tmp_path: Path) -> None:
    from PySide6.QtWidgets import QMessageBox

    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", FRONT))
    session = window.session
    snap = session.snapshot
    assert snap.chapters[0].front_matter
    body = sum(len(c.sentences) for c in snap.chapters[1:])
    window.actions_.named["render_book"].trigger()
    qtbot.waitUntil(lambda: window.render_book_box is not None and window.render_book_box.isVisible(), timeout=WAIT)
    box = window.render_book_box
    assert f"Render {body} of {body} sentences in 3 chapters" in box.text()
    assert "\u201cDedication\u201d" in box.informativeText() and "not known yet" in box.informativeText()
    assert not session.queue.snapshot().jobs  # nothing is queued before the answer
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(100)
    assert not session.queue.snapshot().jobs

    window.render_book_box = None
    window.actions_.named["render_book"].trigger()
    qtbot.waitUntil(lambda: window.render_book_box is not None and window.render_book_box.isVisible(), timeout=WAIT)
    accept = next(b for b in window.render_book_box.buttons()
                  if window.render_book_box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole)
    accept.click()
    qtbot.waitUntil(lambda: len(session.queue.snapshot().jobs) == 1, timeout=5000)
    wait_jobs_done(qtbot, window)
    job = session.queue.snapshot().jobs[0]
    assert job.spec.kind == "book" and job.status == "done" and job.done == body
    assert window.book.model.counts(0)["done"] == 0  # the dedication was left out, as announced

    window.render_book_box = None
    window.actions_.named["render_book"].trigger()  # nothing left to do: no question
    qtbot.waitUntil(lambda: "Every included chapter is already rendered" in window.statusBar().currentMessage(),
                    timeout=10_000)
    assert window.render_book_box is None


def test_book_plan_estimates_from_the_session_then_the_benchmark(qtbot, window: MainWindow,  # noqa: ANN001
                                                                 tmp_path: Path) -> None:
    from studio.desktop.planning import plan_book
    from studio.ui.confirm import book_render_text

    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", FRONT))
    snap = window.session.snapshot
    body = sum(len(c.sentences) for c in snap.chapters[1:])
    measured = plan_book(snap, 2.0, 10.0)
    assert measured.estimated_s == 2.0 * body and measured.basis == "at this project's measured speed"
    bench = plan_book(snap, None, 4.0)
    assert bench.estimated_s == pytest.approx(bench.left_s / 4.0) and bench.audio_s > bench.left_s > 0
    head, detail = book_render_text(bench)
    assert "benchmark" in detail and "Dedication" in detail and f"{body} of {body}" in head


def test_queue_panel_shows_several_rows_and_keeps_its_size(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from PySide6.QtCore import Qt

    win = make_window(qtbot, tmp_path)
    table = win.queue.table
    qtbot.waitUntil(lambda: table.viewport().height() > 0, timeout=5000)
    row = table.verticalHeader().defaultSectionSize()
    assert table.viewport().height() >= 4 * row  # more than two rows at first sight
    dock = win.docks["queue"]
    first = dock.height()
    win.resizeDocks([dock], [first + 120], Qt.Orientation.Vertical)  # what dragging its edge does
    qtbot.waitUntil(lambda: dock.height() >= first + 60, timeout=5000)
    grown = dock.height()
    win.close()
    again = make_window(qtbot, tmp_path)
    try:
        qtbot.waitUntil(lambda: abs(again.docks["queue"].height() - grown) <= 4, timeout=5000)
    finally:
        again.close()


def test_takes_panel_lists_compares_and_chooses_takes_and_the_choice_survives_reopening(
        qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    from PySide6.QtCore import QItemSelectionModel

    from studio.project.takes import take_path

    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books"))
    session, panel = window.session, window.takes
    session.render_chapters([1])
    wait_jobs_done(qtbot, window)
    target = next(s for s in sentences(window, 1) if s.paragraph is not None)
    window.book.select_sentence(target.id)
    window.docks["takes"].raise_()
    qtbot.waitUntil(lambda: panel.table.rowCount() == 1, timeout=WAIT)
    assert panel.table.item(0, 0).text() == "\u2605" and not panel.use_btn.isEnabled()
    assert panel.table.item(0, 3).text() == "Best quality" and "1 take(s) kept" in panel.space.text()

    panel.new_btn.click()
    qtbot.waitUntil(lambda: panel.table.rowCount() == 2, timeout=WAIT)
    panel.new_btn.click()
    qtbot.waitUntil(lambda: panel.table.rowCount() == 3, timeout=WAIT)
    assert [panel.table.item(r, 0).text() for r in range(3)] == ["", "", "\u2605"]  # the newest is used
    assert [panel.table.item(r, 1).text() for r in range(3)] == ["1", "2", "3"]  # numbered per sentence (issue 32)
    ids = [int(panel.table.item(r, 1).data(Qt.ItemDataRole.UserRole)) for r in range(3)]

    selection = panel.table.selectionModel()
    panel.table.selectRow(0)
    selection.select(panel.table.model().index(2, 0),
                     QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
    assert panel.ab_btn.isEnabled() and not panel.use_btn.isEnabled()
    with qtbot.waitSignal(session.takesChanged, timeout=WAIT):
        session.load_takes(target.id)  # a reload (after a render, a choice) keeps the pair selected
    assert panel.selected_ids() == [ids[0], ids[2]]
    heard: list = []
    session.preview.positionChanged.connect(heard.append)
    panel.ab_btn.click()
    qtbot.waitUntil(lambda: bool(heard) and heard[-1].state == "finished", timeout=WAIT)
    assert heard[-1].label == "take 1 then take 3"
    assert any(p.state == "playing" and p.sentence_id == target.id for p in heard)

    panel.table.selectRow(0)
    assert panel.use_btn.isEnabled()
    panel.use_btn.click()
    qtbot.waitUntil(lambda: panel.table.item(0, 0) is not None and panel.table.item(0, 0).text() == "\u2605",
                    timeout=WAIT)
    folder = Path(session.snapshot.folder)
    with Project.open(folder) as project:
        row = next(r for r in project.sentences([1]) if r.id == target.id)
        chosen = take_path(folder, ids[0]).read_bytes()
        assert project.cache.path_for(row.cache_key).read_bytes() == chosen  # export and playback read this
    assert window.book.model.sentence(target.id).duration == pytest.approx(row.duration)
    window.close()

    again = make_window(qtbot, tmp_path)
    try:
        open_and_wait(qtbot, again, folder)
        again.book.select_sentence(target.id)
        qtbot.waitUntil(lambda: again.takes.table.rowCount() == 3, timeout=WAIT)
        assert [again.takes.table.item(r, 0).text() for r in range(3)] == ["\u2605", "", ""]
    finally:
        again.close()


def test_waveform_of_a_chapter_matches_the_export_and_a_click_plays_to_the_chapter_end(
        qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    import wave

    from PySide6.QtCore import QPoint, Qt

    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books"))
    session, view, book = window.session, window.wave, window.book
    session.render_chapters([0])
    wait_jobs_done(qtbot, window)
    one = sentences(window, 0)

    book.tree.setCurrentIndex(book.proxy.mapFromSource(book.model.index(0, 0)))  # the chapter row
    qtbot.waitUntil(lambda: view.data is not None and len(view.data.spans) == len(one), timeout=WAIT)
    data = view.data
    assert [s.sentence_id for s in data.spans] == [s.id for s in one] and all(s.rendered for s in data.spans)
    assert max(data.maxs) > 0.05 and min(data.mins) < -0.05
    starts = [s.start for s in data.spans]
    pauses = session.settings.pauses  # the heading paragraph is spoken as the title, as export does
    assert starts == sorted(starts) and data.spans[1].start - data.spans[0].end == pytest.approx(pauses.title)
    assert data.spans[2].start - data.spans[1].end == pytest.approx(pauses.sentence)
    from studio.delivery.export import export_chapter_files

    with Project.open(session.snapshot.folder) as project:
        out = export_chapter_files(project, tmp_path / "out", "wav", [0])
    with wave.open(str(out[0].path)) as w:
        exported = w.getnframes() / w.getframerate()
    # laid out exactly as export assembles it (the view stops at the last word, the file adds the closing pause)
    assert data.duration + pauses.paragraph + pauses.chapter_end == pytest.approx(exported, abs=0.02)

    computed = session.waveforms.peaks.computed
    book.tree.setCurrentIndex(book.proxy.mapFromSource(book.model.index(1, 0)))  # not rendered: drawn flat
    qtbot.waitUntil(lambda: view.data is not None and view.data.label == "Two", timeout=WAIT)
    assert not any(s.rendered for s in view.data.spans) and max(view.data.maxs) == 0.0
    book.tree.setCurrentIndex(book.proxy.mapFromSource(book.model.index(0, 0)))
    qtbot.waitUntil(lambda: view.data is not None and view.data.label == "One", timeout=WAIT)
    assert session.waveforms.peaks.computed == computed + 1  # the first chapter's peaks came from the cache

    target = data.spans[3]
    heard: list = []
    session.preview.positionChanged.connect(heard.append)
    cursors: list = []
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton,
                     pos=QPoint(int(view.x_of((target.start + target.end) / 2)), view.height() // 2))
    qtbot.waitUntil(lambda: bool(heard) and heard[-1].state == "playing", timeout=WAIT)
    while heard[-1].state != "finished":
        cursors.append(view.cursor_s)
        qtbot.wait(20)
        assert len(cursors) < 3000
    played = [p.sentence_id for p in heard if p.state == "playing" and p.sentence_id is not None]
    assert played[0] == target.sentence_id and set(played) == {s.id for s in one[3:]}  # to the chapter's end
    assert any(c is not None and c >= target.start for c in cursors)  # the cursor followed the sound
    qtbot.waitUntil(lambda: view.cursor_s is None, timeout=5000)


def test_chapter_menu_excludes_includes_and_renames_and_render_book_follows(
        qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    from PySide6.QtWidgets import QMenu

    from studio.desktop.planning import plan_book

    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", FRONT))
    book, model, session = window.book, window.book.model, window.session

    def menu_action(chapter: int, text: str) -> None:
        idx = book.proxy.mapFromSource(model.index(chapter, 0))
        book.tree.setCurrentIndex(idx)
        book._menu(book.tree.visualRect(idx).center())
        menu = book.findChildren(QMenu)[-1]
        next(a for a in menu.actions() if a.text() == text).trigger()
        menu.close()

    assert "(front matter, excluded)" in str(model.index(0, 0).data())
    menu_action(0, "Include in the book")
    qtbot.waitUntil(lambda: model.snapshot.chapters[0].included, timeout=WAIT)
    assert str(model.index(0, 0).data()) == "1. Dedication (front matter)" and model.index(0, 0).data(Qt.ItemDataRole.FontRole).bold()
    menu_action(2, "Exclude from the book")
    qtbot.waitUntil(lambda: not model.snapshot.chapters[2].included, timeout=WAIT)
    assert "(excluded)" in str(model.index(2, 0).data())
    assert model.index(2, 0).data(Qt.ItemDataRole.FontRole).italic()
    book.chapterRenamed.emit(1, "The Opening")  # what the rename dialog sends
    qtbot.waitUntil(lambda: model.snapshot.chapters[1].display_name == "The Opening", timeout=WAIT)
    assert str(model.index(1, 0).data()) == "2. The Opening"

    plan = plan_book(session.snapshot, None, None)
    assert plan.excluded == ("Two",) and plan.chapters == 3
    session.render_book()
    wait_jobs_done(qtbot, window)
    assert model.counts(0)["done"] == len(sentences(window, 0))  # the included front matter was rendered
    assert model.counts(2)["done"] == 0
    with Project.open(session.snapshot.folder) as project:
        assert [c.included for c in project.chapter_control.all()] == [True, True, False, True]


def test_status_bar_names_the_active_preset_in_plain_words(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    from dataclasses import replace

    from studio.desktop.preset_words import plain_name

    assert window.preset_label.text() == ""
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books"))
    settings = window.session.settings
    qtbot.waitUntil(lambda: window.preset_label.text().startswith("Preset: Best quality (fp32-cpu"), timeout=5000)
    assert settings.voice_id in window.preset_label.text()
    with qtbot.waitSignal(window.session.settingsChanged, timeout=WAIT):
        window.session.update_settings(replace(settings, preset="int8-cpu"))
    assert window.preset_label.text().startswith("Preset: Fast on CPU (int8-cpu)")
    assert plain_name("fp16-cuda") == "Fast on NVIDIA GPU" and plain_name("custom") == "custom"
    window.session.close_project()
    assert window.preset_label.text() == ""


def test_first_run_shows_how_to_start_and_the_recent_projects(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    try:
        assert win.pages.currentWidget() is win.empty and win.empty.isVisible()
        assert win.empty.import_btn.isVisible() and win.empty.sample_btn.isEnabled()
        assert "drop a manuscript" in win.empty.hint.text() and not win.empty.recent.isVisible()
        win.qsettings.setValue("paths/sampleDir", str(tmp_path / "mine"))
        win.empty.sample_btn.click()
        qtbot.waitUntil(lambda: win.session.snapshot is not None, timeout=WAIT)
        assert win.pages.currentWidget() is win.book
        assert (tmp_path / "mine" / "sample.md").is_file()  # copied, never written beside the installed one
        assert win.session.snapshot.title.startswith("The Lighthouse Keeper")
        folder = win.session.snapshot.folder
        win.session.close_project()
        qtbot.waitUntil(lambda: win.pages.currentWidget() is win.empty, timeout=5000)
        assert win.empty.recent.count() == 1 and win.empty.recent.isVisible()
        item = win.empty.recent.item(0)
        assert folder in item.text()
        win.empty.recent.itemActivated.emit(item)  # double-click or Enter
        qtbot.waitUntil(lambda: win.session.snapshot is not None and win.pages.currentWidget() is win.book,
                        timeout=WAIT)
        assert win.session.snapshot.folder == folder
    finally:
        win.close()


def test_language_review_one_line_banner_show_link_and_filters(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    from support.gui import copy_sample
    open_and_wait(qtbot, window, copy_sample(tmp_path / "books"))
    book, model = window.book, window.book.model
    french = next(p for c in model.snapshot.chapters for p in c.paragraphs if p.language == "fr")
    banner = book.summary
    assert banner.isVisible() and not banner.wordWrap() and "\n" not in banner.text()
    assert "looks like French (no French voice: the English voice reads it with French rules). Read it in English?" \
        in banner.full_text and banner.full_text.startswith("\u26a0 \u2018")  # the passage itself, quoted
    assert "split" in banner.full_text and "Read it in English" in banner.text()  # the links are never elided
    assert banner.height() < 2.2 * banner.fontMetrics().height()  # one line

    banner.linkActivated.emit("show")  # the "Show" link
    assert book.filter_combo.currentText() == "No voice"
    rows = visible_rows(window)
    assert rows[0].startswith("Chapter Two") and rows[1].startswith("Ma grand-m")  # the chapter, then the passage
    assert len(rows) == 2 + len(french.sentences)  # nothing else: split-sentence flags are not mixed in

    book.filter_combo.setCurrentText("All")
    book.language_combo.setCurrentIndex(book.language_combo.findData("fr"))
    assert [r for r in visible_rows(window) if not r.startswith("Chapter ")][0].startswith("Ma grand-m")
    assert len(visible_rows(window)) == 2 + len(french.sentences)
    book.language_combo.setCurrentIndex(book.language_combo.findData("en"))
    assert not any(r.startswith("Ma grand-m") for r in visible_rows(window)) and len(visible_rows(window)) > 10
    book.language_combo.setCurrentIndex(0)

    banner.linkActivated.emit("keep")  # the producer decides: "Keep them English"
    qtbot.waitUntil(lambda: "French" not in banner.text(), timeout=WAIT)  # at once, no save, no reload
    assert window.book.model.snapshot is not None
    assert "split" in banner.text()
    banner.linkActivated.emit("show")
    assert book.filter_combo.currentText() == "Flagged"


def test_a_slow_load_that_builds_nothing_shows_no_preparing_dialog(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """The dialog follows the engine's own word that it builds (tests/engine/test_one_time_build.py),
    never a guess from how long loading takes."""
    import time

    from support.gui import shared_factory

    lend = shared_factory()

    def slow_build(plan):  # noqa: ANN001, ANN202 - a slow start that builds nothing
        time.sleep(2.0)
        return lend(plan)

    win = make_window(qtbot, tmp_path, build=slow_build)
    shown: list[bool] = []
    win.session.engineStatus.connect(lambda _s: shown.append(win.loading.dialog.isVisible()))
    try:
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "books"))
        win.session.render_chapters([1])
        wait_jobs_done(qtbot, win)
        assert shown and not any(shown) and win.loading.announced == []
    finally:
        win.close()


def test_search_in_a_big_book_is_answered_off_the_gui_thread_from_one_index(
        qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    text = big_book()
    assert len(text.split()) > 190_000
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", text, "big.md"))
    book, session = window.book, window.session
    probe = AnswerProbe(window)  # the GUI thread's own work while a ping waits (not the machine's load)
    probe.start()
    try:
        qtbot.keyClicks(book.search, "white wh")  # one keystroke after another
        qtbot.waitUntil(lambda: book.proxy.matches is not None and book.proxy.matches.needle == "white wh",
                        timeout=WAIT)
    finally:
        probe.stop()
    rows = visible_rows(window)
    assert rows[0].startswith("Chapter 141 (track 141)") and any(r.startswith("The white whale surfaced") for r in rows)
    assert len(rows) <= 4  # the chapter, the paragraph, the sentence (and nothing else)
    assert session.finder.indexes_built == 1  # eight keystrokes, one index
    worked = [a.gui_cpu_s if a.gui_cpu_s is not None else a.wait_s for a in probe.take()]
    assert max(worked, default=0) < 1.0, worked  # the window never froze on the search
    qtbot.keyClicks(book.search, "ale")
    qtbot.waitUntil(lambda: book.proxy.matches.needle == "white whale", timeout=WAIT)
    assert session.finder.indexes_built == 1
    book.search.clear()
    assert book.proxy.matches is None and len(visible_rows(window)) > 141
