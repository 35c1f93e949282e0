"""Errors the studio reports to a person.

Every error carries a one-line, human message; the command line prints ``str(err)``
and exits non-zero, the GUI shows it in the window. Nothing else should escape to
the user as a traceback.
"""

from __future__ import annotations

from pathlib import Path


class StudioError(Exception):
    """Base class: anything the user can act on (bad file, missing voice, ...)."""


class ManuscriptError(StudioError):
    """A manuscript could not be imported; names the file and the reason."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class VoiceError(StudioError):
    """A voice is missing, unreadable, or cannot be downloaded."""


class EngineError(StudioError):
    """An engine failed to load or to synthesize."""


class PresetUnavailable(StudioError):
    """A preset cannot run on this machine; the message says why (no CUDA, ...)."""


class ProjectError(StudioError):
    """A project folder or database is unusable (newer schema, corrupt, ...)."""
