"""The producer's walkthrough end to end, checked on disk.

A 120-chapter EPUB 3 (navigation page, copyright page) is imported in the real
window; a chapter is excluded; two chapters and one more are rendered; a
sentence is edited and re-rendered while a chapter renders (and is done first);
a sentence is taken again, the two takes compared A/B and the older one chosen;
the chapters are exported. The exported files are numbered over the included
chapters and hold the chosen take. The test command (and so CI) runs this file
in Xvfb, a real X server with Qt's xcb platform.
"""

from __future__ import annotations

import os
import wave
import zipfile
from pathlib import Path

import pytest
from window_support import WAIT, make_window, open_and_wait, wait_jobs_done

from studio.project.store import Project
from studio.project.takes import take_path
from studio.qt.messages import ExportProgress

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
        session.export(tmp_path / "out", "wav", [one, two, four], on_progress=lambda _p: None, on_done=done.append)
        qtbot.waitUntil(lambda: bool(done), timeout=WAIT)
        names = sorted(p.name for p in (tmp_path / "out").iterdir())
        assert names == ["001 - Chapter 1.wav", "002 - Chapter 2.wav", "003 - Chapter 4.wav"]  # over the included
        exported = pcm(tmp_path / "out" / "002 - Chapter 2.wav")
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
