"""The ``studio`` command line: one module per command.

Why this shape: every command module has a ``register(subparsers)`` function that
adds its parser and sets ``func``; the modules are imported when the parser is
built, so they must import lightly (heavy imports belong inside their handlers).
Commands from layers above this one (``gui``, which lives with the desktop app)
are handed in by the launcher (:mod:`studio.__main__`) as ``register`` functions:
the command line never names the UI. Errors a person can
act on (:class:`~studio.core.errors.StudioError`) become one ``studio: error:`` line
and exit code 2 -- never a traceback; a full disk reads ``studio: error: disk full:
...``. Ctrl-C exits 130 and keeps finished work.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import Callable, Sequence

from studio import __version__
from studio.cli.common import EXIT_ERROR, EXIT_INTERRUPTED, INTERRUPTED_MESSAGE
from studio.core.errors import DiskFull, StudioError, is_disk_full

#: Modules with a ``register(subparsers)`` function, in the order of ``studio --help``.
COMMAND_MODULES: tuple[str, ...] = (
    "studio.cli.voices", "studio.cli.inspect", "studio.cli.render", "studio.cli.export", "studio.cli.details",
    "studio.cli.chapters",
    "studio.cli.lexicon", "studio.cli.cast", "studio.cli.proof", "studio.cli.bench", "studio.cli.triton",
)

#: ``register(subparsers)``: adds one command's parser and sets its ``func``
Register = Callable[[argparse._SubParsersAction], None]


def build_parser(commands: Sequence[Register] = ()) -> argparse.ArgumentParser:
    """The ``studio`` parser: this package's commands, then ``commands`` handed in from above."""
    parser = argparse.ArgumentParser(prog="studio", description="Audiobook studio: manuscripts in, chapters out.")
    parser.add_argument("--version", action="version", version=f"studio {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for register in commands:
        register(sub)
    return parser


def _setup_logging(verbosity: int) -> None:
    """The studio's own lines on stderr; the libraries' Python warnings go to the log too,
    shown from ``-v`` on (a producer's terminal shows what the studio says)."""
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("studio: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.captureWarnings(True)
    logging.getLogger("py.warnings").setLevel(logging.WARNING if verbosity > 0 else logging.ERROR)
    from studio.stack.isolation.child import LOG_LEVEL_ENV

    os.environ[LOG_LEVEL_ENV] = logging.getLevelName(level)  # the model process logs at the same level


def main(argv: Sequence[str] | None = None, *, commands: Sequence[Register] = (), default: str | None = None) -> int:
    """Run one command; what :mod:`studio.__main__` (the console script, ``python -m studio``) calls.

    ``commands`` adds commands from the layers above (the desktop app's ``gui``);
    ``default`` is the command a bare ``studio`` runs (the launcher passes ``gui``:
    plain ``studio`` opens the desktop app, as a producer expects).
    """
    parser = build_parser(commands)
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv and default is not None:
        argv = [default]
    args = parser.parse_args(argv)
    _setup_logging(args.verbose)
    try:
        return _run(args)
    finally:
        _stop_helper_processes()


def _stop_helper_processes() -> None:
    """Wait for multiprocessing's resource tracker, if a model process started one.

    Why: a spawned model process makes Python start a tracker process that only
    exits once it sees this process gone, so it outlived every ``studio render``
    by a moment. Stopping it here (the model processes are closed by then) means no
    process of the command outlives the command.
    """
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    stop = getattr(getattr(tracker, "_resource_tracker", None), "_stop", None)
    if stop is not None:
        try:
            stop()
        except Exception as exc:  # private API of the standard library: never fail the command over it
            logging.getLogger(__name__).debug("resource tracker not stopped: %s", exc)


def _run(args: argparse.Namespace) -> int:
    """The command, with errors a person can act on turned into one line and an exit code."""
    try:
        return int(args.func(args) or 0)
    except StudioError as err:
        _error(str(err))
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write(f"\nstudio: {INTERRUPTED_MESSAGE}\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `studio voices | head`
        try:
            sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except OSError as err:  # disk full, permission denied: the environment, not a bug
        if is_disk_full(err):  # a write the cache, database and writers did not map
            _error(str(DiskFull(err.filename or "a file", (err.strerror or "no space left on device").lower())))
            return EXIT_ERROR
        where = f": {err.filename}" if getattr(err, "filename", None) else ""
        _error(f"{err.strerror or err}{where}")
        return EXIT_ERROR


def _error(message: str) -> None:
    line = " ".join(message.split()) or "unknown error"
    sys.stderr.write(f"studio: error: {line}\n")

