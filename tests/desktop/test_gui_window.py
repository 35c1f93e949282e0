"""The main window end to end with pytest-qt: import, flags, languages, render, edit, export.

Rendering uses the real bundled voice through the real model worker; only the
engine instance is shared between tests (loading it takes seconds).
"""

from __future__ import annotations

import time
import wave
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from support.gui import TINY, copy_sample, ffprobe, write_manuscript
from studio.project.store import Project
from studio.desktop.messages import JobSpec
from studio.ui.main_window import MainWindow
from support.window import WAIT, make_window, open_and_wait, sentences, visible_rows, wait_jobs_done

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]


def test_import_sample_shows_chapters_flags_and_language_override(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, copy_sample(tmp_path / "books"))
    model = window.book.model
    snap = model.snapshot
    # "Chapter One: The Lamp" numbers itself: the one number follows as the track's, not "1. Chapter One"
    assert [f"{c.title} (track {i + 1})" for i, c in enumerate(snap.chapters)] == [str(model.index(i, 0).data()) for i in range(3)]
    assert window.windowTitle().startswith("The Lighthouse Keeper")
    french = next(p for c in snap.chapters for p in c.paragraphs if p.language == "fr")
    assert french.unvoiced and "without voice" in str(model.index(french.chapter, 3).data())
    assert any(s.was_split for s in snap.chapters[2].sentences) and "split" in str(model.index(2, 3).data())
    assert "fr (" in str(model.index(french.index, 1, model.index(french.chapter, 0)).data())
    assert window.book.summary.isVisible() and "no French voice" in window.book.summary.full_text

    window.book.filter_combo.setCurrentText("Flagged")
    rows = visible_rows(window)
    assert not any(r.startswith("Chapter One") for r in rows)  # chapter 1 has nothing flagged
    assert any(r.startswith("Ma grand-m") for r in rows) and any(r.startswith("Chapter Three") for r in rows)

    window.book.languageChosen.emit(french.chapter, french.index, "en")  # what the context menu sends
    qtbot.waitUntil(lambda: model.snapshot.chapters[french.chapter].paragraphs[french.index].override == "en", timeout=WAIT)
    assert not model.snapshot.chapters[french.chapter].paragraphs[french.index].unvoiced
    assert "set by you" in str(model.index(french.index, 1, model.index(french.chapter, 0)).data())
    with Project.open(window.session.snapshot.folder) as project:
        langs = {r.language for r in project.sentences([french.chapter]) if r.paragraph == french.index}
    assert langs == {"en"}
    assert not any(r.startswith("Ma grand-m") for r in visible_rows(window))  # no longer flagged


#: chapter one long enough that a pause after two sentences always lands mid-chapter,
#: however fast the machine (the tree's counts refresh a beat after the database)
LONG_FIRST_CHAPTER = TINY.replace(
    "Then it was night.",
    "Then it was night. " + " ".join(f"The lamp number {n} was lit." for n in range(1, 15)),
)


def test_render_pause_resume_edit_regenerate_and_export(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", LONG_FIRST_CHAPTER))
    session, model = window.session, window.book.model
    first = sentences(window, 0)
    assert len(first) >= 20

    session.pause()
    job = session.render_chapters([0])
    qtbot.wait(800)
    assert session.queue.snapshot().job(job).status == "queued"  # paused queue starts nothing
    assert all(s.state == "pending" for s in sentences(window, 0))
    session.resume()
    qtbot.waitUntil(lambda: model.counts(0).get("done", 0) >= 2, timeout=WAIT)
    session.pause()
    qtbot.waitUntil(lambda: window.queue.snapshot.job(job).status == "paused", timeout=WAIT)
    qtbot.wait(300)
    held = model.counts(0)["done"]
    qtbot.wait(1500)
    assert model.counts(0)["done"] == held < len(first)  # nothing renders while paused
    assert "paused" in window.queue.overall.format()
    session.resume()
    wait_jobs_done(qtbot, window)
    assert model.counts(0) == {"pending": 0, "rendering": 0, "done": len(first), "failed": 0}
    assert window.readouts.updates > 0
    rendered = [r for r in window.readouts.chart.points if r[1] > 0]
    assert rendered and window.readouts.last.rss_bytes > 50 << 20

    with Project.open(session.snapshot.folder) as project:
        before = {r.id: (r.cache_key, r.synth_count) for r in project.sentences([0])}
    target = first[2]
    idx = window.book.model.sentence_index(target.id)
    assert model.setData(idx, "The sun was very bright.")  # an in-place edit in the tree
    qtbot.waitUntil(lambda: len(session.queue.snapshot().jobs) == 2 and not session.queue.snapshot().active, timeout=WAIT)
    with Project.open(session.snapshot.folder) as project:
        after = {r.id: (r.cache_key, r.synth_count) for r in project.sentences([0])}
        edited = next(r for r in project.sentences([0]) if r.id == target.id)
    changed = {i for i in before if before[i] != after[i]}
    assert changed == {target.id} and edited.text == "The sun was very bright." and edited.state == "done"
    # the queue is read directly, the states arrive as a queued signal a moment later
    qtbot.waitUntil(lambda: model.sentence(target.id).state == "done", timeout=5000)

    other = first[4]
    session.render_sentences([other.id], regenerate=True)
    qtbot.waitUntil(lambda: not session.queue.snapshot().active and len(session.queue.snapshot().jobs) == 3, timeout=WAIT)
    with Project.open(session.snapshot.folder) as project:
        again = {r.id: r.synth_count for r in project.sentences([0])}
    assert again[other.id] == after[other.id][1] + 1
    assert all(again[i] == after[i][1] for i in again if i != other.id)
    qtbot.waitUntil(lambda: model.sentence(other.id).state == "done", timeout=5000)  # its state, a moment later

    opened: list[QUrl] = []
    for fmt in ("wav", "mp3"):
        window.open_export()
        dlg = window.export_dialog
        dlg.open_url = opened.append
        assert dlg.checked_chapters() == [0]  # only the rendered chapter can be exported
        dlg.folder.setText(str(tmp_path / "out"))
        dlg.set_format(fmt)
        dlg.export_btn.click()
        qtbot.waitUntil(lambda: dlg.result_progress is not None, timeout=WAIT)
        assert dlg.open_btn.isVisible()
        dlg.open_btn.click()
        dlg.close()
    wav = next((tmp_path / "out").glob("01 - *.wav"))
    with wave.open(str(wav)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 22050) and w.getnframes() > 22050
    mp3 = next((tmp_path / "out").glob("01 - *.mp3"))
    assert "codec_name=mp3" in ffprobe(mp3)
    assert opened and opened[-1].toLocalFile() == str((tmp_path / "out").resolve())


def test_preview_latest_request_wins_and_space_toggles(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books"))
    session = window.session
    seen: list = []
    session.preview.positionChanged.connect(seen.append)
    first = session.play(sentences(window, 0), "chapter one")  # not rendered: streamed by the worker
    second = session.play(sentences(window, 1), "chapter two")  # clicked elsewhere at once
    assert second > first
    qtbot.waitUntil(lambda: bool(seen) and seen[-1].request_id == second and seen[-1].state == "playing", timeout=WAIT)
    qtbot.keyClick(window.book.tree, Qt.Key.Key_Space)  # space pauses ...
    qtbot.waitUntil(lambda: session.preview.position().state == "paused", timeout=5000)
    qtbot.keyClick(window.book.tree, Qt.Key.Key_Space)  # ... and resumes
    qtbot.waitUntil(lambda: session.preview.position().state == "finished", timeout=WAIT)
    ids_two = {s.id for s in sentences(window, 1)}
    heard = [p.sentence_id for p in seen if p.request_id == second and p.state == "playing"]
    assert set(heard) == ids_two
    assert not any(p.request_id == first and p.state == "playing" for p in seen)
    spoken = " ".join(e.inner.__class__.__name__ and " ".join(e.spoken) for e in window.engines)
    assert "Rain fell on the roof." in spoken and "The cat sat down." not in spoken  # the old request was dropped
    assert window.book.model.playing is None or window.book.model.playing in ids_two
    qtbot.keyClicks(window.book.search, "sat down")  # space in a text field types, it does not toggle
    assert window.book.search.text() == "sat down" and session.preview.position().state == "finished"


def test_no_audio_device_is_reported_in_the_window(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from studio.desktop.sinks import SoundDeviceSink, output_device_problem

    if output_device_problem() is None:
        pytest.skip("this machine has an audio output device")
    win = make_window(qtbot, tmp_path, sink_factory=SoundDeviceSink)
    try:
        qtbot.waitUntil(lambda: win.audio_label.text().startswith("No sound output"), timeout=WAIT)
        assert "-1" not in win.audio_label.toolTip()  # never "Error querying device -1"
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "books"))
        win.book.tree.setCurrentIndex(win.book.proxy.index(1, 0))
        with qtbot.waitSignal(win.session.preview.problem, timeout=5000) as blocker:
            win.toggle_playback()
        assert "No sound output" in blocker.args[0] and "rendering and export still work" in blocker.args[0]
        assert "No sound output" in win.statusBar().currentMessage()
        assert not win.session.queue.has_preview()  # nothing is synthesized for nobody
    finally:
        win.close()


def test_isolated_model_process_renders_and_shows_child_memory(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from studio.stack.build import build_engine

    win = make_window(qtbot, tmp_path, build=build_engine)
    try:
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "books"))
        children = []
        win.session.readout.connect(lambda r: children.append(r.children))
        started = time.monotonic()
        win.session.render_chapters([1])
        wait_jobs_done(qtbot, win)
        stalls = [ms for t, ms in win.session.stall.stalls if t > started]
        assert max(stalls, default=0) < 500, stalls  # model load and synthesis never freeze the window
        assert win.queue.snapshot.jobs[0].status == "done"
        assert win.book.model.counts(1)["done"] == len(sentences(win, 1))
        assert max(children) >= 1  # the model process is counted in the memory readout
    finally:
        win.close()


def test_errors_settings_recent_projects_and_drop(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    win.open_path(tmp_path / "missing.md")
    qtbot.waitUntil(lambda: bool(win.errors), timeout=WAIT)
    assert "no such file" in win.errors[-1].message and "no such file" in win.statusBar().currentMessage()
    assert "no such file" in win.log_pane.toPlainText()

    book = write_manuscript(tmp_path / "books")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(book))])
    drop = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    win.dropEvent(drop)
    qtbot.waitUntil(lambda: win.session.snapshot is not None, timeout=WAIT)
    folder = win.session.snapshot.folder
    assert win.recent_projects()[0] == folder
    win.book.long_minutes.setValue(1)
    qtbot.waitUntil(lambda: win.book.model.snapshot.long_chapter_minutes == 1, timeout=5000)
    win.docks["readouts"].close()
    win.close()

    again = make_window(qtbot, tmp_path)
    try:
        assert again.recent_projects()[0] == folder and again.book.long_minutes.value() == 1
        assert again.docks["readouts"].isHidden() and not again.docks["details"].isHidden()  # layout restored
        names = [a.text() for a in again.actions_.recent_menu.actions()]
        assert Path(folder).name in names
    finally:
        again.close()


def test_voices_dialog_maps_a_language_and_saves(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books"))
    folder = Path(window.session.snapshot.folder)
    (folder / "bench.json").write_text('{"presets": {"fp32-cpu": {"x_real_time": 7.5, "rtf": 0.133}}}')
    window.open_voices()
    dlg = window.voices_dialog
    qtbot.waitUntil(lambda: dlg.facts is not None, timeout=WAIT)
    fp32 = next(p for p in dlg.facts.presets if p.name == "fp32-cpu")
    assert fp32.available and fp32.bench is not None and fp32.bench.x_real_time == 7.5
    assert "fr" in dlg.combos and dlg.combos["fr"].count() > 1
    dlg.combos["fr"].setCurrentIndex(1)
    chosen = dlg.combos["fr"].currentData()
    with qtbot.waitSignal(window.session.settingsChanged, timeout=WAIT):
        dlg._save()
    assert window.session.settings.language_voices == {"fr": chosen}
    assert window.session.voice_for("fr") == chosen


def test_queue_reorder_and_cancel_through_the_panel(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books"))
    s = window.session
    s.pause()
    a = s.submit(JobSpec("chapters", "A", (0,), sentences_hint=7))
    b = s.submit(JobSpec("chapters", "B", (1,), sentences_hint=3))
    window.queue.table.selectRow(1)
    window.queue.up_btn.click()
    assert [j.job_id for j in window.queue.snapshot.jobs] == [b, a]
    window.queue.table.selectRow(1)
    window.queue.cancel_btn.click()
    assert window.queue.snapshot.job(a).status == "cancelled"
    window.queue.pause_btn.click()  # resume
    wait_jobs_done(qtbot, window)
    assert window.queue.snapshot.job(b).status == "done" and window.book.model.counts(0)["done"] == 0
