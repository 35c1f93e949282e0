"""Render screenshots of the studio's main states into ``docs/screenshots/*.png``.

Run under a display (e.g. ``Xvfb :99 & DISPLAY=:99 python scripts/screenshots.py``);
``QT_QPA_PLATFORM=offscreen`` works too but draws without native fonts/styling.
Everything happens in a temporary folder (project, settings, log), with the real
bundled voice: the sample manuscript is imported, chapter 1 is rendered while the
live readouts run, and the export and voices dialogs are opened.

Shots: ``book.png`` (project open, tree and details), ``flagged.png`` (only
flagged items), ``rendering.png`` (queue and live readouts mid-render),
``export.png`` (export dialog after a finished export), ``voices.png`` (voices
and presets).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

log = logging.getLogger("screenshots")


def wait_until(app, condition: Callable[[], bool], timeout: float, what: str) -> None:  # noqa: ANN001
    """Run the event loop until ``condition()`` holds (RuntimeError after ``timeout`` s)."""
    from PySide6.QtCore import QEventLoop, QTimer

    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise RuntimeError(f"timed out waiting for {what}")
        loop = QEventLoop()
        QTimer.singleShot(50, loop.quit)
        loop.exec()


def settle(app, seconds: float = 0.3) -> None:  # noqa: ANN001
    end = time.monotonic() + seconds
    wait_until(app, lambda: time.monotonic() > end, seconds + 5, "the UI to settle")


def main(argv: list[str] | None = None, shots=None) -> int:  # noqa: ANN001 - shots: shoot's signature
    """Parse the options, work in a temporary state/config folder, take ``shots`` (default: :func:`shoot`)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    ap.add_argument("--manuscript", type=Path, default=REPO / "resources" / "sample.md")
    ap.add_argument("--in-process", action="store_true", help="load the model in this process")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    tmp = Path(tempfile.mkdtemp(prefix="studio-shots-"))
    os.environ["XDG_STATE_HOME"] = str(tmp / "state")
    os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")
    try:
        return (shots or shoot)(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def open_book(args: argparse.Namespace, tmp: Path, settle_s: float = 0.6, *, isolation=None,  # noqa: ANN001, ANN201
              sink_speed: float | None = 0.5):
    """The window (model in this process unless ``isolation``, a silent player) with
    ``args.manuscript`` opened: ``(app, session, window, grab)``, ``grab(widget, name)``
    saving into ``args.out``."""
    import studio.desktop  # noqa: F401 - binding guard first

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from studio.desktop.session import ProjectSession
    from studio.desktop.sinks import NullSink
    from studio.ui.import_flow import PROJECTS_DIR_KEY
    from studio.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(["studio"])
    app.setApplicationDisplayName("Audiobook Studio")
    settings = QSettings(str(tmp / "studio.ini"), QSettings.Format.IniFormat)
    settings.setValue(PROJECTS_DIR_KEY, str(tmp / "projects"))  # the folder of projects, as if asked before
    session = ProjectSession(isolation=isolation,
                             sink_factory=lambda: NullSink() if sink_speed is None else NullSink(speed=sink_speed))
    win = MainWindow(session, settings)
    win.resize(1440, 900)
    win.show()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    def grab(widget, name: str) -> None:  # noqa: ANN001
        settle(app, settle_s)
        widget.grab().save(str(out / name))
        log.info("wrote %s (%dx%d)", out / name, widget.width(), widget.height())

    book = tmp / "books" / args.manuscript.name
    book.parent.mkdir(parents=True)
    shutil.copy(args.manuscript, book)
    win.open_path(book)
    wait_until(app, lambda: session.snapshot is not None, 120, "the project to open")
    return app, session, win, grab


def shoot(args: argparse.Namespace, tmp: Path) -> int:
    from studio.stack.build import Isolation

    app, session, win, grab = open_book(args, tmp, 0.3, isolation=None if args.in_process else Isolation(),
                                        sink_speed=None)
    win.book.tree.expandAll()
    snap = session.snapshot
    french = next((p for c in snap.chapters for p in c.paragraphs if p.effective_language == "fr"), None)
    if french is not None:
        idx = win.book.proxy.mapFromSource(win.book.model.sentence_index(french.sentences[0].id)).parent()
        win.book.tree.setCurrentIndex(idx)
        win.book.tree.scrollTo(idx)
    grab(win, "book.png")

    win.book.filter_combo.setCurrentText("Flagged")
    grab(win, "flagged.png")
    win.book.filter_combo.setCurrentText("All")
    win.book.tree.collapseAll()
    win.book.tree.expand(win.book.proxy.index(0, 0))

    first = min(snap.chapters, key=lambda c: len(c.sentences))
    session.render_chapters([first.index])
    session.render_book()
    wait_until(app, lambda: win.readouts.updates >= 3 and session.stats.rates()[0] > 0, 240, "render readouts")
    wait_until(app, lambda: (win.readouts.last is not None and win.readouts.last.x_real_time > 0
                             and sum(win.book.model.counts(first.index).values()) > 0
                             and win.book.model.counts(first.index).get("done", 0) >= 3), 240, "three sentences")
    settle(app, 2.5)
    grab(win, "rendering.png")

    wait_until(app, lambda: win.book.model.counts(first.index).get("done", 0) == len(first.sentences), 600,
               "the chapter to finish")
    session.pause()
    session.cancel_all()
    win.open_export()
    dlg = win.export_dialog
    dlg.folder.setText(str(tmp / "export"))
    dlg.set_format("mp3")
    dlg.export_btn.click()
    wait_until(app, lambda: dlg.result_progress is not None or "failed" in dlg.status.text(), 120, "the export")
    grab(dlg, "export.png")
    dlg.close()

    win.open_voices()
    vd = win.voices_dialog
    wait_until(app, lambda: vd.facts is not None, 120, "voices and presets")
    vd.tabs.setCurrentIndex(1)
    tree = vd.presets.tree
    for i in range(tree.topLevelItemCount()):  # show why a preset cannot run here, if one cannot
        item = tree.topLevelItem(i)
        if item.text(2) != "Yes":
            tree.setCurrentItem(item)
            break
    grab(vd, "voices.png")
    vd.close()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
