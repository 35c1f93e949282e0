"""Errors the studio reports to a person.

Every error carries a one-line, human message; the command line prints ``str(err)``
and exits non-zero, the GUI shows it in the window. Nothing else should escape to
the user as a traceback.
"""

from __future__ import annotations

import errno
from pathlib import Path


class StudioError(Exception):
    """Base class: anything the user can act on (bad file, missing voice, ...)."""


class ManuscriptError(StudioError):
    """A manuscript could not be imported; names the file and the reason."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class Cancelled(StudioError):
    """The producer stopped a long operation (an import, a download); nothing half-done is kept."""


class VoiceError(StudioError):
    """A voice is missing, unreadable, or cannot be downloaded."""


class EngineError(StudioError):
    """An engine failed to load or to synthesize."""


class PresetUnavailable(StudioError):
    """A preset cannot run on this machine; the message says why (no CUDA, ...)."""


class ProjectError(StudioError):
    """A project folder or database is unusable (newer schema, corrupt, ...)."""


class DiskFull(StudioError):
    """A write failed because the disk (or quota) is full.

    Raised instead of a bare ``OSError(ENOSPC)`` by the cache, the project database
    and the chapter writers. What was finished before stays intact (every write is
    atomic), so the user frees space and runs the same command again to resume.
    The message starts with ``"disk full: "``.
    """

    def __init__(self, where: str | Path, detail: str = "no space left on device") -> None:
        self.where = str(where)
        self.detail = detail
        super().__init__(
            f"disk full: {detail} while writing {self.where}; free some space and run the "
            "same command again to resume (finished work is kept)"
        )

    def __reduce__(self) -> tuple[object, ...]:  # picklable across processes and Qt queues
        return (type(self), (self.where, self.detail))


#: ``errno`` values that mean "no space left": ENOSPC and, where it exists, EDQUOT.
_NO_SPACE = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def is_disk_full(err: BaseException) -> bool:
    """Whether ``err`` is an OSError saying the disk or the user's quota is full."""
    return isinstance(err, OSError) and err.errno in _NO_SPACE
