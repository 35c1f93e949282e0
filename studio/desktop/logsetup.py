"""Logging to a file and to the window, and a last-resort exception hook.

Why: errors must be readable in the window *and* kept in a file a user can send
("never silent, never a crash"). Log records come from any thread; the
:class:`QtLogHandler` hands them to the GUI thread as plain strings through a
queued signal. :func:`install_excepthook` catches what nobody else caught (in the
GUI thread or in a Python thread), logs the traceback and shows a one-line
message instead of letting the app die.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
import threading
import traceback
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, Signal

from studio.core.paths import state_dir
from studio.desktop.messages import ErrorInfo

FORMAT = "%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s"


def log_dir() -> Path:
    """The state folder (:func:`studio.core.paths.state_dir`: ``~/.local/state/studio`` on Linux)."""
    return state_dir()


def log_file_path() -> Path:
    return log_dir() / "studio.log"


def setup_file_logging(level: int = logging.INFO, path: Path | None = None) -> Path | None:
    """Add a rotating file handler to the root logger; returns the file (None if not writable)."""
    path = path or log_file_path()
    root = logging.getLogger()
    for h in root.handlers:
        if isinstance(h, logging.handlers.RotatingFileHandler) and Path(h.baseFilename) == path:
            return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError as exc:
        logging.getLogger(__name__).warning("cannot write the log file %s: %s", path, exc)
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(level)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    return path


class _Relay(QObject):
    record = Signal(str, int)  # formatted line, level number


class QtLogHandler(logging.Handler):
    """Forwards formatted records to the GUI thread (``relay.record(text, levelno)``)."""

    def __init__(self, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.relay = _Relay()
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.relay.record.emit(self.format(record), record.levelno)
        except RuntimeError:  # the relay was deleted at shutdown
            pass


class _ErrorRelay(QObject):
    error = Signal(object)  # ErrorInfo


_relay: _ErrorRelay | None = None


def install_excepthook(show: Callable[[ErrorInfo], None]) -> Callable[[], None]:
    """Log and show uncaught exceptions (GUI thread and Python threads); returns an undo."""
    global _relay
    log = logging.getLogger("studio.uncaught")
    _relay = _ErrorRelay()
    _relay.error.connect(show)
    old_hook, old_thread_hook = sys.excepthook, threading.excepthook
    relay = _relay

    def report(exc_type, exc, tb, where: str = "") -> None:  # noqa: ANN001
        if issubclass(exc_type, KeyboardInterrupt):
            old_hook(exc_type, exc, tb)
            return
        detail = "".join(traceback.format_exception(exc_type, exc, tb))
        log.error("uncaught exception%s:\n%s", where, detail.rstrip())
        try:
            relay.error.emit(ErrorInfo(f"Unexpected error: {exc_type.__name__}: {exc}", "Unexpected error", detail))
        except RuntimeError:
            pass

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        name = args.thread.name if args.thread is not None else "?"
        report(args.exc_type, args.exc_value, args.exc_traceback, f" in thread {name}")

    sys.excepthook = report
    threading.excepthook = thread_hook

    def undo() -> None:
        sys.excepthook, threading.excepthook = old_hook, old_thread_hook

    return undo
