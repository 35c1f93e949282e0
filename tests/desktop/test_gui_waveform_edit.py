"""The waveform as a place to work: zoom, scrubbing (grains from under the mouse), a selection played, the pause
after one sentence dragged or typed (stored, nothing re-rendered, export and estimates
longer by exactly the added pause), and the keyboard habits.

Real widgets and mouse/key events, real project files, real SQLite, the real bundled voice.
"""

from __future__ import annotations

import wave
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from support.gui import write_manuscript
from support.window import WAIT, RecordingSink, make_window, open_and_wait, sentences, wait_jobs_done

from studio.delivery.export import export_chapter_files
from studio.project.duration import chapter_estimates
from studio.project.pauses import pauses_after
from studio.project.store import Project
from studio.desktop.scrub import FADE_S, GRAIN_S
from studio.ui.main_window import MainWindow
from support.gui import BOOK, exported_seconds

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]


def show_chapter(qtbot, win: MainWindow, n: int) -> None:  # noqa: ANN001
    book = win.book
    book.tree.setCurrentIndex(book.proxy.mapFromSource(book.model.index(n, 0)))
    qtbot.waitUntil(lambda: win.wave.data is not None and win.wave.data.label == "One", timeout=WAIT)


def test_zoom_ruler_selection_and_a_dragged_pause_that_export_follows(qtbot, window: MainWindow,  # noqa: ANN001
                                                                      tmp_path: Path) -> None:
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", BOOK))
    session, view = window.session, window.wave
    session.render_chapters([0])
    wait_jobs_done(qtbot, window)
    one = sentences(window, 0)
    folder = session.snapshot.folder
    before_file = exported_seconds(folder, tmp_path / "before")
    before_tree = session.snapshot.chapters[0].estimated_s
    show_chapter(qtbot, window, 0)
    view.setFocus()

    # zoom with the keys, back to fit
    full = view.visible_s
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert view.zoom == pytest.approx(1.5) and view.visible_s == pytest.approx(full / 1.5)
    qtbot.keyClick(view, Qt.Key.Key_0)
    assert view.zoom == pytest.approx(1.0)

    # the ruler scrubs: the cursor follows the pointer
    y_ruler, y_wave = view.RULER // 2, view.RULER + (view.height() - view.RULER) // 2
    qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=QPoint(int(view.x_of(1.0)), y_ruler))
    assert view.cursor_s == pytest.approx(1.0, abs=view.visible_s / view.width() * 2)
    qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=QPoint(int(view.x_of(1.0)), y_ruler))

    # drag a selection over sentences 2-4, Enter plays exactly those
    spans = view.data.spans
    a, b = (spans[1].start + spans[1].end) / 2, (spans[3].start + spans[3].end) / 2
    heard: list = []
    session.preview.positionChanged.connect(heard.append)
    qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=QPoint(int(view.x_of(a)), y_wave))
    qtbot.mouseMove(view, QPoint(int(view.x_of(b)), y_wave))
    qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=QPoint(int(view.x_of(b)), y_wave))
    assert view.selection is not None and view.spans_in(*view.selection) == tuple(s.sentence_id for s in spans[1:4])
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(heard) and heard[-1].state == "finished", timeout=WAIT)
    assert [p.sentence_id for p in heard if p.sentence_id is not None][0] == spans[1].sentence_id
    assert {p.sentence_id for p in heard if p.sentence_id is not None} == {s.sentence_id for s in spans[1:4]}

    # drag the handle at the end of the pause after sentence 3, about half a second to the right
    target = spans[2]
    old = target.gap
    x0 = int(round(view.x_of(target.end + old)))
    assert view.handle_at(x0) == target
    dragged: list = []
    view.pauseChanged.connect(lambda sid, s: dragged.append((sid, s)))
    qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=QPoint(x0, y_wave))
    qtbot.mouseMove(view, QPoint(int(round(view.x_of(target.end + old + 0.5))), y_wave))
    qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=QPoint(int(round(view.x_of(target.end + old + 0.5))), y_wave))
    assert dragged and dragged[0][0] == target.sentence_id
    new = dragged[0][1]
    assert new == pytest.approx(old + 0.5, abs=0.05)
    qtbot.waitUntil(lambda: view.data.span_of(target.sentence_id).gap == pytest.approx(new), timeout=WAIT)
    assert view.data.span_of(target.sentence_id).own_gap
    assert window.wave_panel.pause.value() == pytest.approx(new)  # the typed value follows the handle

    with Project.open(folder) as project:
        assert pauses_after(project.db) == {target.sentence_id: pytest.approx(new)}
        rows = {r.id: r for r in project.sentences([0])}
        assert chapter_estimates(project)[0] == pytest.approx(before_tree + new - old, abs=1e-6)
    assert all(rows[s.id].state == "done" and rows[s.id].synth_count == 1 for s in one)  # nothing re-rendered
    assert session.snapshot.chapters[0].estimated_s == pytest.approx(before_tree + new - old, abs=1e-6)
    after_file = exported_seconds(folder, tmp_path / "after")
    assert after_file - before_file == pytest.approx(new - old, abs=1.0 / 22050 + 1e-6)  # exactly the added pause

    # typed: 1.20 s after the same sentence
    window.wave_panel.pause.setValue(1.2)
    qtbot.waitUntil(lambda: view.data.span_of(target.sentence_id).gap == pytest.approx(1.2), timeout=WAIT)
    window.wave_panel.reset.click()  # and back to the project's pause
    qtbot.waitUntil(lambda: view.data.span_of(target.sentence_id).gap == pytest.approx(old), timeout=WAIT)
    with Project.open(folder) as project:
        assert pauses_after(project.db) == {}


def test_keyboard_habits_move_through_the_sentences(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, write_manuscript(tmp_path / "books", BOOK))
    session, view = window.session, window.wave
    session.render_chapters([0])
    wait_jobs_done(qtbot, window)
    show_chapter(qtbot, window, 0)
    view.setFocus()
    spans = view.data.spans
    seeks: list[int] = []
    view.seekRequested.connect(seeks.append)
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.focus == spans[0] and view.offset_s == 0.0
    qtbot.keyClick(view, Qt.Key.Key_L)
    qtbot.keyClick(view, Qt.Key.Key_L)
    qtbot.keyClick(view, Qt.Key.Key_J)
    assert seeks == [spans[1].sentence_id, spans[2].sentence_id, spans[1].sentence_id]
    stops: list = []
    view.stopRequested.connect(lambda: stops.append(1))
    qtbot.keyClick(view, Qt.Key.Key_K)
    assert stops == [1]
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.focus == spans[-1] and view.offset_s + view.visible_s == pytest.approx(view.data.duration)


def test_scrubbing_plays_grains_from_under_the_mouse_and_parks_the_playhead(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    sinks: list[RecordingSink] = []
    win = make_window(qtbot, tmp_path, sink_factory=lambda: sinks.append(RecordingSink()) or sinks[-1])
    try:
        open_and_wait(qtbot, win, write_manuscript(tmp_path / "books", BOOK))
        session, view = win.session, win.wave
        session.render_chapters([0])
        wait_jobs_done(qtbot, win)
        show_chapter(qtbot, win, 0)
        span = max(view.data.spans[1:], key=lambda s: s.end - s.start)  # the longest body sentence
        node = win.book.model.sentence(span.sentence_id)
        with Project.open(session.snapshot.folder) as project:
            entry = project.cache_entry(node.cache_key)
            audio, rate = project.cache.load(entry), entry.sample_rate
        positions: list[float] = []
        heard: list = []
        session.preview.positionChanged.connect(heard.append)
        y = view.RULER // 2
        xs = [int(round(view.x_of(span.start + f * (span.end - span.start)))) for f in (0.15, 0.35, 0.55, 0.75)]
        qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=QPoint(xs[0] - 8, y))
        for x in xs:  # drag the playhead through the sentence, a grain heard at each stop
            qtbot.mouseMove(view, QPoint(x, y))
            t = view.seconds_at(x)
            positions.append(t)
            assert view.cursor_s == pytest.approx(t)  # the playhead is under the mouse
            at = int(round((t - span.start) * rate))
            inner = int(FADE_S * rate)
            probe = audio[at + inner:at + int(GRAIN_S * rate) - inner]  # the grain's unfaded samples
            assert probe.any()
            qtbot.waitUntil(lambda: bool(sinks) and sinks[0].played(probe), timeout=WAIT)
        assert all(b - a > GRAIN_S for a, b in zip(positions, positions[1:]))  # each stop its own grain
        assert not sinks[0].played(audio[int(FADE_S * rate):int(GRAIN_S * rate) - int(FADE_S * rate)])  # never the start
        qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=QPoint(xs[-1], y))
        assert view.cursor_s == pytest.approx(positions[-1]) and view.parked_s == pytest.approx(positions[-1])
        assert {p.label for p in heard if p.state == "playing"} <= {"scrub"}
        qtbot.waitUntil(lambda: session.preview.position().state == "idle", timeout=WAIT)  # release: quiet
        assert view.cursor_s == pytest.approx(positions[-1])  # and the playhead stays where it was let go

        # a click in the ruler still seeks: playback from the sentence under it
        other = view.data.spans[-1]
        x = int(round(view.x_of((other.start + other.end) / 2)))
        qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
        qtbot.waitUntil(lambda: any(p.label != "scrub" and p.sentence_id == other.sentence_id for p in heard),
                        timeout=WAIT)
    finally:
        win.close()
