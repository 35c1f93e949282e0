"""Screenshots of the window on a laptop screen (1280 x 720) and of the Proof dock.

Run under a display (``xvfb-run -a python scripts/screenshots_laptop.py``). Like the
other screenshot scripts it works in a temporary folder with the real bundled voice:
the sample manuscript is imported, the long-chapter threshold set to one minute (so
the long-chapter, no-voice and split-sentence warnings all show), chapter 1 rendered,
one of its sentences given another sentence's audio (a planted mistake for the
recogniser to find), and the chapter proof-listened with the real speech model.

Shots: ``laptop-1280x720.png`` (the whole window at 1280 x 720), ``proof-dock.png`` (the dock in a
window of 1440 x 960, tall enough for the details and buttons under the lists).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # the studio, and the shared screenshot helpers

import screenshots  # noqa: E402 - the same options, folders and event-loop helpers

wait_until = screenshots.wait_until


def plant_mistake(project, chapter: int) -> str:  # noqa: ANN001 - a studio Project
    """Give the chapter's second prose sentence the audio of its third; returns the sentence's text."""
    rows = [r for r in project.sentences([chapter]) if r.cache_key and not r.is_title]
    target, other = rows[1], rows[2]
    entry = project.cache_entry(other.cache_key)
    audio = project.cache.load(entry)
    stored = project.cache.store(target.cache_key, audio, entry.sample_rate)
    project.mark_done(target.id, stored, synthesized=False)
    return target.text


def shoot(args: argparse.Namespace, tmp: Path) -> int:
    from PySide6.QtCore import Qt

    app, session, win, grab = screenshots.open_book(args, tmp)
    win.proof.auto.setChecked(False)
    win.resize(1280, 720)
    win.book.long_minutes.setValue(1)
    wait_until(app, lambda: "long chapter" in win.book.summary.full_text, 30, "the long-chapter warning")
    session.render_chapters([0])
    wait_until(app, lambda: win.book.model.counts(0).get("done", 0) == len(session.snapshot.chapters[0].sentences),
               900, "chapter 1 to render")
    log = logging.getLogger("screenshots")
    log.info("planted: %s", plant_mistake(session.project, 0))
    win.proof_ctl.listen()
    wait_until(app, lambda: win.proof_ctl._running, 30, "proof-listening to start")
    wait_until(app, lambda: not win.proof_ctl._running and win.proof.table.rowCount() > 0, 900, "proof-listening")
    win.docks["proof"].raise_()
    win.proof.table.selectRow(0)
    grab(win, "laptop-1280x720.png")
    win.resize(1440, 960)  # the dock with room for the details and the buttons under the lists
    win.resizeDocks([win.docks["proof"]], [520], Qt.Orientation.Vertical)
    grab(win.docks["proof"], "proof-dock.png")
    log.info("window %dx%d, minimum %dx%d; proof summary: %s", win.width(), win.height(),
             win.minimumSizeHint().width(), win.minimumSizeHint().height(), win.proof.summary.full_text)
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(screenshots.main(None, shoot))
