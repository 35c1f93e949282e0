"""The producer's walkthrough end to end, checked on disk.

A 120-chapter EPUB 3 (navigation page, copyright page) is imported in the real
window; a chapter is excluded; two chapters and one more are rendered; a
sentence is edited and re-rendered while a chapter renders (and is done first);
a sentence is taken again, the two takes compared A/B and the older one chosen;
the chapters are exported. The exported files carry the book's chapter numbers
(the tree's: the front matter and the excluded chapter leave gaps) and hold the
chosen take. The test command (and so CI) runs this file
in Xvfb, a real X server with Qt's xcb platform.
"""

from __future__ import annotations

import os
import wave
import zipfile
from pathlib import Path

import pytest
from support.window import WAIT, make_window, open_and_wait, wait_jobs_done

from studio.project.numbering import chapter_number
from studio.project.store import Project
from studio.project.takes import take_path
from studio.desktop.messages import ExportProgress

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("private_dirs")]
CHAPTERS = 120
CONTAINER = """<?xml version="1.0"?>
<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""


def page(body: str) -> str:
    return ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
            f'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>t</title></head><body>{body}</body></html>')


def long_epub(path: Path) -> Path:
    """Nav page, copyright page, then CHAPTERS chapters (the first one longer)."""
    words = ["The harbour was quiet.", "The boats rocked.", "Gulls cried overhead."]
    chapters = {}
    for n in range(1, CHAPTERS + 1):
        text = " ".join(f"Lamp {k} was lit at dusk." for k in range(1, 19)) if n == 1 else " ".join(words[: 1 + n % 3])
        chapters[f"c{n}"] = page(f"<h2>Chapter {n}</h2><p>{text}</p>")
    nav = page('<nav epub:type="toc"><h1>Contents</h1><ol>'
               + "".join(f'<li><a href="c{n}.xhtml">Chapter {n}</a></li>' for n in range(1, CHAPTERS + 1))
               + "</ol></nav>")
    items = ['<item id="nav" href="nav.xhtml" properties="nav" media-type="application/xhtml+xml"/>',
             '<item id="copy" href="copyright.xhtml" media-type="application/xhtml+xml"/>']
    items += [f'<item id="{k}" href="{k}.xhtml" media-type="application/xhtml+xml"/>' for k in chapters]
    spine = '<itemref idref="nav"/><itemref idref="copy"/>' + "".join(f'<itemref idref="{k}"/>' for k in chapters)
    package = ('<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
               '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">x</dc:identifier>'
               '<dc:title>Long Harbour</dc:title><dc:language>en</dc:language></metadata>'
               f'<manifest>{"".join(items)}</manifest><spine>{spine}</spine></package>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        zf.writestr("META-INF/container.xml", CONTAINER)
        zf.writestr("OEBPS/content.opf", package)
        zf.writestr("OEBPS/nav.xhtml", nav)
        zf.writestr("OEBPS/copyright.xhtml", page("<p>Copyright 2025 A. Author. All rights reserved.</p>"))
        for k, body in chapters.items():
            zf.writestr(f"OEBPS/{k}.xhtml", body)
    return path


def pcm(path: Path) -> bytes:
    with wave.open(str(path)) as w:
        return w.readframes(w.getnframes())


def test_runs_on_the_expected_platform(qtbot) -> None:  # noqa: ANN001
    """CI runs this file in Xvfb (installer/run-tests.sh): make sure it really did."""
    from PySide6.QtGui import QGuiApplication

    expected = os.environ.get("STUDIO_EXPECT_QT_PLATFORM") or os.environ.get("QT_QPA_PLATFORM", "offscreen")
    assert QGuiApplication.platformName() == expected


def test_walkthrough_import_exclude_render_edit_takes_export(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    win = make_window(qtbot, tmp_path)
    try:
        (tmp_path / "books").mkdir()
        open_and_wait(qtbot, win, long_epub(tmp_path / "books" / "long.epub"))
        session, model = win.session, win.book.model
        snap = session.snapshot
        index = {c.title: c.index for c in snap.chapters}
        assert len(snap.chapters) >= CHAPTERS
        assert not any(c.included for c in snap.chapters if c.front_matter)  # nav and copyright left out
        one, two, three, four = (index[f"Chapter {n}"] for n in (1, 2, 3, 4))

        session.set_chapter_included(three, False)  # the producer excludes a chapter
        qtbot.waitUntil(lambda: not session.snapshot.chapters[three].included, timeout=WAIT)

        long_job = session.render_chapters([one])
        session.render_chapters([two])
        session.render_chapters([four])
        qtbot.waitUntil(lambda: model.counts(one).get("done", 0) >= 2, timeout=WAIT)
        edited = next(s for s in session.snapshot.chapters[two].sentences if s.text == "The harbour was quiet.")
        session.edit_sentence(edited.id, "The boats rocked in the evening swell.")
        qtbot.waitUntil(lambda: any(j.spec.urgent and j.status == "done" for j in session.queue.snapshot().jobs),
                        timeout=WAIT)
        assert session.queue.snapshot().job(long_job).status != "done"  # the edit did not wait for the chapter
        wait_jobs_done(qtbot, win)
        assert all(j.status == "done" for j in session.queue.snapshot().jobs)

        session.render_sentences([edited.id], regenerate=True)  # a second take
        qtbot.waitUntil(lambda: len(session.queue.snapshot().jobs) == 5 and not session.queue.snapshot().active,
                        timeout=WAIT)
        with Project.open(session.snapshot.folder) as project:
            takes = project.takes.for_sentence(edited.id)
        assert len(takes) == 2 and takes[1].chosen
        heard: list = []
        session.preview.positionChanged.connect(heard.append)
        session.play_takes(edited.id, [takes[0].id, takes[1].id])  # A/B
        qtbot.waitUntil(lambda: bool(heard) and heard[-1].state == "finished", timeout=WAIT)
        assert any(p.state == "playing" and p.sentence_id == edited.id for p in heard)
        session.choose_take(edited.id, takes[0].id)
        qtbot.waitUntil(lambda: win.book.model.sentence(edited.id).duration == pytest.approx(takes[0].duration),
                        timeout=WAIT)

        done: list[ExportProgress] = []
        session.exports.export(tmp_path / "out", "wav", [one, two, four], on_progress=lambda _p: None, on_done=done.append)
        qtbot.waitUntil(lambda: bool(done), timeout=WAIT)
        names = sorted(p.name for p in (tmp_path / "out").iterdir())
        numbered = {n: f"{chapter_number(i):03d} - Chapter {n}.wav" for n, i in ((1, one), (2, two), (4, four))}
        assert names == sorted(numbered.values())  # the tree's numbers, gaps and all
        exported = pcm(tmp_path / "out" / numbered[2])
        folder = Path(session.snapshot.folder)
        assert pcm(take_path(folder, takes[0].id)) in exported  # the chosen take is in the file
        assert pcm(take_path(folder, takes[1].id)) not in exported
        with Project.open(folder) as project:
            row = next(r for r in project.sentences([two]) if r.id == edited.id)
            assert row.text == "The boats rocked in the evening swell." and row.state == "done"
            assert project.counts([one, two, four])["done"] == len(project.sentences([one, two, four]))
            assert project.counts([three])["done"] == 0
    finally:
        win.close()


def test_walkthrough_queue_edit_take_quit_paused_reopen_and_drag_a_pause(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """The producer's day, round two: a finished job listed, a long chapter rendering, an edit
    and a new take (both done before the chapter, which then resumes); the queue paused with a
    chapter waiting, File > Quit > Finish later; the book reopened with the queue paused; a
    pause dragged in the waveform, and the exported chapter longer by exactly that much."""
    from PySide6.QtCore import QPoint, Qt
    from support.gui import _running_spells
    from support.gui import LONG_ONE
    from support.gui import write_manuscript

    from studio.delivery.export import export_chapter_files
    from studio.project.pauses import pauses_after

    win = make_window(qtbot, tmp_path)
    open_and_wait(qtbot, win, write_manuscript(tmp_path / "books", LONG_ONE))
    session, model = win.session, win.book.model
    folder = session.snapshot.folder
    one = win.book.sentences_of_chapters([0])
    two = win.book.sentences_of_chapters([1])
    session.render_chapters([1])
    wait_jobs_done(qtbot, win)
    seen: list = []
    session.queueChanged.connect(seen.append)
    chapter = session.render_chapters([0])
    qtbot.waitUntil(lambda: model.counts(0).get("done", 0) >= 2, timeout=WAIT)
    win.book.select_sentence(two[1].id)
    win.inspector.saveText.emit(two[1].id, "We stayed inside by the fire.")
    win.takes.show_sentence(two[0].id, two[0].text)
    win.takes.new_btn.click()
    qtbot.waitUntil(lambda: sum(j.spec.urgent for j in session.queue.snapshot().jobs) == 2, timeout=WAIT)
    qtbot.waitUntil(lambda: all(j.status == "done" for j in session.queue.snapshot().jobs if j.spec.urgent),
                    timeout=WAIT)
    assert model.counts(0).get("done", 0) < len(one)  # the edit and the take did not wait for the chapter
    wait_jobs_done(qtbot, win)
    assert session.queue.snapshot().job(chapter).status == "done" and _running_spells(seen, chapter) <= 3

    win.queue.pause_btn.click()
    session.render_chapters([2])
    qtbot.waitUntil(lambda: len(win.queue.snapshot.active) == 1, timeout=WAIT)
    win.actions_.named["quit"].trigger()
    qtbot.waitUntil(lambda: win.quit_guard.box is not None and win.quit_guard.box.isVisible(), timeout=WAIT)
    win.quit_guard.later_btn.click()
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=WAIT)

    again = make_window(qtbot, tmp_path)
    try:
        open_and_wait(qtbot, again, Path(folder))
        qtbot.waitUntil(lambda: len(again.queue.model.jobs) == 1, timeout=WAIT)
        assert again.queue.snapshot.paused and again.queue.model.jobs[0].spec.chapters == (2,)
        with Project.open(folder) as project:
            before = export_chapter_files(project, tmp_path / "before", "wav", [0])[0].duration
        book, view = again.book, again.wave
        book.tree.setCurrentIndex(book.proxy.mapFromSource(book.model.index(0, 0)))
        qtbot.waitUntil(lambda: view.data is not None and len(view.data.spans) == len(one), timeout=WAIT)
        span = view.data.spans[3]
        y = view.RULER + (view.height() - view.RULER) // 2
        x0 = int(round(view.x_of(span.end + span.gap)))
        x1 = int(round(view.x_of(span.end + span.gap + 0.8)))
        dragged: list = []
        view.pauseChanged.connect(lambda sid, s: dragged.append(s))
        qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=QPoint(x0, y))
        qtbot.mouseMove(view, QPoint(x1, y))
        qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=QPoint(x1, y))
        assert dragged and dragged[0] == pytest.approx(span.gap + 0.8, abs=0.05)
        qtbot.waitUntil(lambda: view.data.span_of(span.sentence_id).gap == pytest.approx(dragged[0]), timeout=WAIT)
        with Project.open(folder) as project:
            assert pauses_after(project.db) == {span.sentence_id: pytest.approx(dragged[0])}
            after = export_chapter_files(project, tmp_path / "after", "wav", [0])[0].duration
        assert after - before == pytest.approx(dragged[0] - span.gap, abs=1e-3)
    finally:
        again.close()
