"""Registers ``studio gui`` with the command line (handed to it by the launcher, :mod:`studio.__main__`).

Imports nothing heavy: the CLI builds its parser on every run, so Qt is imported
only when the ``gui`` command actually runs.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    from studio.ui.app import add_arguments

    p = sub.add_parser("gui", help="start the desktop studio",
                       description="Start the desktop studio, optionally opening a manuscript or project.")
    add_arguments(p)
    p.set_defaults(func=_cmd_gui)


def _cmd_gui(args: argparse.Namespace) -> int:
    from studio.ui.app import run

    return run(args.path, in_process=args.in_process)
