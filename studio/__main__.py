"""The ``studio`` launcher: the console script and ``python -m studio``.

Why a launcher above the command line: the command line (:mod:`studio.cli`) sits
below the desktop layers and must not name them, yet ``studio gui`` and a bare
``studio`` open the desktop app. This module stands above every layer, so it
hands the UI's ``gui`` command to the command line. :mod:`studio.ui.command`
imports nothing heavy (Qt is imported only when ``gui`` runs), so ``studio
--help`` stays quick.
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

from studio.cli import main as cli_main
from studio.ui.command import register as register_gui


def main(argv: Sequence[str] | None = None) -> int:
    """Every ``studio`` command, ``gui`` included; a bare ``studio`` opens the desktop app."""
    _give_a_window_its_streams()
    return cli_main(argv, commands=(register_gui,), default="gui")


def _give_a_window_its_streams() -> None:
    """Started without a console (``pythonw`` from the Windows Start menu), Python has no
    stdout or stderr, and the first line written to one would raise; the log file keeps
    what matters (:mod:`studio.desktop.logsetup`)."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - for the process's life


if __name__ == "__main__":
    sys.exit(main())
