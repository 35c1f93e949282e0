"""``studio gui [FILE|PROJECT]``: the desktop studio's entry point.

Why so little here: the application object, logging (file + window), the
exception hook and settings identity are set up once; everything else lives in
the session and the window. ``main(argv)`` returns the exit code so the command
line can call it like any other subcommand.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path
from typing import Sequence

ORG_NAME = "Audiobook Studio"
ORG_DOMAIN = "studio.local"
APP_NAME = "studio"

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="studio gui", description="Start the desktop studio.")
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", type=Path, help="manuscript file or project folder to open")
    p.add_argument("--in-process", action="store_true",
                   help="run the voice model inside the GUI process (default: a separate, crash-isolated process)")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    return run(args.path, in_process=args.in_process)


def run(path: Path | None = None, *, in_process: bool = False) -> int:
    import studio.desktop  # noqa: F401 - applies the binding guard before Qt is used

    from PySide6.QtCore import QCoreApplication, QSettings
    from PySide6.QtWidgets import QApplication

    from studio.desktop.logsetup import install_excepthook, setup_file_logging
    from studio.stack.build import Isolation
    from studio.desktop.session import ProjectSession
    from studio.ui.main_window import MainWindow

    QCoreApplication.setOrganizationName(ORG_NAME)
    QCoreApplication.setOrganizationDomain(ORG_DOMAIN)
    QCoreApplication.setApplicationName(APP_NAME)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationDisplayName("Audiobook Studio")
    logfile = setup_file_logging()
    settings = QSettings()
    isolated = not in_process and str(settings.value("engine/isolated", "true")).lower() != "false"
    session = ProjectSession(isolation=Isolation() if isolated else None)
    window = MainWindow(session, settings)
    undo = install_excepthook(window.show_error)
    log.info("studio GUI started (log file: %s, model %s)", logfile, "in a child process" if isolated else "in-process")
    window.show()
    # Ctrl-C in the terminal closes the window properly (settings saved, workers stopped);
    # Python sees the signal on the next timer tick of the GUI thread.
    signal.signal(signal.SIGINT, lambda *_: window.close())
    if path is not None:
        window.open_path(path)
    try:
        return int(app.exec())
    finally:
        undo()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
