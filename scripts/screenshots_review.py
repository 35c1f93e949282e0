"""Screenshots of the review bench: waveform, takes, chapter control, the Render Book question.

Run under a display (``xvfb-run -a python scripts/screenshots_review.py``). Like
``scripts/screenshots.py`` it works in a temporary folder with the real bundled
voice (loaded in this process): the sample manuscript is imported, chapter 1 is
rendered, a sentence is taken three times, a chapter is renamed, another
excluded and one split in two.

Shots: ``waveform.png`` (a chapter's waveform with the play cursor),
``takes.png`` (three takes of a sentence, two selected for A/B, an older one
chosen), ``chapters.png`` (a renamed, a split and an excluded chapter, front
matter included), ``render-book.png`` (the question before a whole-book render).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import screenshots  # noqa: E402 - the same options, folders and event-loop helpers
from screenshots import settle, wait_until  # noqa: E402

log = logging.getLogger("screenshots")


def main(argv: list[str] | None = None) -> int:
    return screenshots.main(argv, shoot)


def shoot(args: argparse.Namespace, tmp: Path) -> int:
    from PySide6.QtCore import QItemSelectionModel

    app, session, win, grab = screenshots.open_book(args, tmp)
    model, tree = win.book.model, win.book.tree
    session.render_chapters([0])
    wait_until(app, lambda: bool(session.queue.snapshot().jobs) and not session.queue.snapshot().active, 900,
               "chapter 1 to render")

    chapter = win.book.proxy.mapFromSource(model.index(0, 0))
    tree.setCurrentIndex(chapter)
    tree.expand(chapter)
    wait_until(app, lambda: win.wave.data is not None and win.wave.data.label == session.snapshot.chapters[0].title,
               60, "the waveform")
    spans = win.wave.data.spans
    win.play_from(spans[min(4, len(spans) - 1)].sentence_id)
    wait_until(app, lambda: win.wave.cursor_s is not None, 60, "the play cursor")
    settle(app, 1.5)
    grab(win, "waveform.png")
    session.preview.stop()

    target = next(s for s in session.snapshot.chapters[0].sentences if s.paragraph is not None)
    win.book.select_sentence(target.id)
    win.docks["takes"].raise_()
    panel = win.takes
    wait_until(app, lambda: panel.table.rowCount() == 1, 60, "the first take")
    for n in (2, 3):
        panel.new_btn.click()
        wait_until(app, lambda n=n: panel.table.rowCount() == n, 300, f"take {n}")
    panel.table.selectRow(0)
    panel.use_btn.click()
    wait_until(app, lambda: panel.table.item(0, 0).text() == "\u2605", 60, "the chosen take")
    panel.table.selectRow(0)
    panel.table.selectionModel().select(panel.table.model().index(2, 0),
                                        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
    grab(win, "takes.png")

    session.rename_chapter(0, "The Lamp")
    session.set_chapter_included(2, False)
    wait_until(app, lambda: not session.snapshot.chapters[2].included
               and session.snapshot.chapters[0].display_name == "The Lamp", 60, "the chapter changes")
    chapters = len(session.snapshot.chapters)
    session.split_chapter(1, 2)  # before its third paragraph: "... (part 2)"
    wait_until(app, lambda: len(session.snapshot.chapters) == chapters + 1, 60, "the split")
    tree.collapseAll()
    tree.setCurrentIndex(win.book.proxy.mapFromSource(model.index(2, 0)))
    grab(win, "chapters.png")

    win.confirm_render_book()
    wait_until(app, lambda: win.render_book_box is not None and win.render_book_box.isVisible(), 60, "the question")
    grab(win.render_book_box, "render-book.png")
    win.render_book_box.close()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
