"""Screenshots of the window on a 1366 x 768 laptop screen: the first launch, and maximized with
every dock shown (issue 41). Run under a 1366 x 768 X server::

    xvfb-run -a -s "-screen 0 1366x768x24" python scripts/screenshots_1366.py

Like the other screenshot scripts it works in a temporary folder with the real bundled voice:
the first launch is the window as the app places it with no saved layout (the whole screen is
grabbed, so what does not fit would be cut); then the sample manuscript is imported, a few of
its sentences rendered, and the window takes the screen's free area (what maximized gives; Xvfb
runs no window manager, so no title bar) and each tab of its two dock groups is shown in turn.

Shots: ``laptop-1366-first-launch.png``, ``laptop-1366-details-queue.png``,
``laptop-1366-takes-waveform.png``, ``laptop-1366-readouts-proof.png``,
``laptop-1366-progress-log.png``, ``laptop-1366-cast.png``.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # the studio, and the shared screenshot helpers

import screenshots  # noqa: E402 - the same options, folders and event-loop helpers

log = logging.getLogger("screenshots")
#: (right-column dock, bottom dock) shown together in one shot
PAIRS = (("details", "queue"), ("takes", "waveform"), ("readouts", "proof"), ("progress", "log"), ("cast", None))


def shoot(args: argparse.Namespace, tmp: Path) -> int:
    import studio.desktop  # noqa: F401 - binding guard first

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QScrollArea

    from studio.desktop.session import ProjectSession
    from studio.desktop.sinks import NullSink
    from studio.ui.import_flow import PROJECTS_DIR_KEY
    from studio.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(["studio"])
    app.setApplicationDisplayName("Audiobook Studio")
    screen = app.primaryScreen()
    room = screen.availableGeometry()
    log.info("screen %dx%d, free area %s", screen.size().width(), screen.size().height(), room)
    settings = QSettings(str(tmp / "studio.ini"), QSettings.Format.IniFormat)
    settings.setValue(PROJECTS_DIR_KEY, str(tmp / "projects"))
    session = ProjectSession(isolation=None, sink_factory=lambda: NullSink(speed=0.5))
    win = MainWindow(session, settings)  # no saved layout: a first launch
    win.show()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)

    def save(name: str, whole_screen: bool = False) -> None:
        screenshots.settle(app, 0.6)
        image = screen.grabWindow(0) if whole_screen else win.grab()
        image.save(str(out / name))
        log.info("wrote %s (%dx%d)", out / name, image.width(), image.height())

    save("laptop-1366-first-launch.png", whole_screen=True)
    log.info("first launch: window %s inside %s: %s", win.frameGeometry(), room, room.contains(win.frameGeometry()))

    book = tmp / "books" / args.manuscript.name
    book.parent.mkdir(parents=True)
    shutil.copy(args.manuscript, book)
    win.open_path(book)
    screenshots.wait_until(app, lambda: session.snapshot is not None, 300, "the project to open")
    ids = [s.id for s in session.snapshot.chapters[0].sentences][:6]
    session.render_sentences(ids)
    screenshots.wait_until(app, lambda: all(win.book.model.sentence(i).state == "done" for i in ids), 900,
                           "six sentences to render")
    win.setGeometry(room)  # maximized on a screen without a window manager
    screenshots.settle(app, 0.5)
    win.tab_docks()
    win.book.select_sentence(ids[2])
    for right, bottom in PAIRS:
        for name in (right, bottom):
            if name is not None:
                win.docks[name].raise_()
        save(f"laptop-1366-{right}-{bottom}.png" if bottom else f"laptop-1366-{right}.png")
        for name in (right, bottom):
            if name is None:
                continue
            area = win.docks[name].findChild(QScrollArea)
            log.info("%s: dock %dx%d, scrolls: vertical %d, horizontal %d", name, win.docks[name].width(),
                     win.docks[name].height(), area.verticalScrollBar().maximum(), area.horizontalScrollBar().maximum())
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(screenshots.main(None, shoot))
