"""Manuscript -> project: create one, or reopen the one already made for it.

Why here and not in the CLI: the GUI's "open manuscript" does the same thing, and
the rule must be the same for both -- a project folder belongs to one manuscript;
reopening it with that manuscript resumes; if the manuscript changed since, it is
re-imported and every unchanged sentence keeps its rendered audio.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Sequence

from studio.core.errors import ProjectError, StudioError
from studio.core.files import sha256_file
from studio.core.lexicon import Lexicon
from studio.project.folder import default_project_dir
from studio.project.imported_direction import apply_speech
from studio.project.settings import ProjectSettings
from studio.project.store import Project

if TYPE_CHECKING:
    from studio.text.importer import ImportProgress, Manuscript
    from studio.text.raw import BlockSpeech

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Opened:
    """What was done to open it: ``opened`` (a project folder), or for a manuscript
    ``created``, ``reopened`` or ``reimported``."""

    project: Project
    action: Literal["opened", "created", "reopened", "reimported"]


def open_project(
    path: str | Path,
    *,
    folder: str | Path | None = None,
    voice_id: str | None = None,
    backend: str = "onnx",
    max_sentence_chars: int = 500,
    progress: ImportProgress | None = None,
) -> Opened:
    """A project folder as it is (``opened``), or a manuscript's project, made or resumed.

    ``progress`` hears the import's steps (and may cancel it: see
    :data:`studio.text.importer.ImportProgress`)."

    The one way the command line and the desktop app open what the user points at.
    A manuscript's project goes in ``folder`` (default: ``<name>.studio`` beside the
    manuscript); a new one starts with ``voice_id`` (None: the bundled voice) on
    ``backend``.
    """
    from studio.engine.voice.catalog import get_voice

    path = Path(path)
    if not path.exists():
        raise StudioError(f"{path}: no such file or folder")
    if path.is_dir():
        if not Project.is_project(path):
            raise StudioError(f"{path} is a folder but not a studio project; give a manuscript file or a project folder")
        return Opened(Project.open(path), "opened")
    settings = new_project_settings(get_voice(voice_id), backend)
    folder = Path(folder) if folder is not None else default_project_dir(path, path.parent)
    return open_for_manuscript(path, folder, settings, max_sentence_chars=max_sentence_chars, progress=progress)


def open_for_manuscript(
    manuscript: str | Path,
    folder: str | Path,
    settings: ProjectSettings,
    *,
    max_sentence_chars: int = 500,
    progress: ImportProgress | None = None,
) -> Opened:
    """Create the project for ``manuscript`` in ``folder``, or reopen it.

    ``settings`` are used only when creating. A folder holding the project of a
    *different* manuscript is refused (ProjectError) rather than overwritten.
    """
    manuscript = Path(manuscript)
    folder = Path(folder)
    if not manuscript.is_file():
        raise StudioError(f"{manuscript}: no such file")
    digest = sha256_file(manuscript)
    if not Project.is_project(folder):
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise ProjectError(f"{folder} exists and is not a studio project; choose another --project folder")
        read = _import(manuscript, max_sentence_chars, progress)
        if progress is not None:
            progress("Saving the project", 0, 1)  # the last moment to cancel: nothing is written yet
        project = Project.create(folder, read.book, settings, source_hash=digest)
        import_speaking(project, manuscript.name, read.lexicon, read.speech)
        return Opened(project, "created")

    project = Project.open(folder)
    try:
        source, stored_digest = project.source()
        if stored_digest == digest:
            return Opened(project, "reopened")
        same_path = bool(source) and _same_file(source, manuscript)
        if not same_path and stored_digest:
            raise ProjectError(
                f"{folder} is the project of {source or 'another manuscript'}; "
                "use --project to choose another folder for this one"
            )
        read = _import(manuscript, max_sentence_chars, progress)
        project.replace_book(read.book, source_hash=digest)
        import_speaking(project, manuscript.name, read.lexicon, read.speech)
        log.warning("%s changed since the project was made; re-imported it (unchanged sentences keep their audio)", manuscript.name)
        return Opened(project, "reimported")
    except BaseException:
        project.close()
        raise


def import_speaking(project: Project, name: str, lexicon: Lexicon, speech: Sequence[BlockSpeech]) -> int:
    """What the manuscript says about speaking it (an EPUB 3's PLS and SSML pronunciations,
    its CSS Speech direction), put on the project; returns how many entries were added.

    Entries the project already has are kept (the producer's choice beats the
    publisher's), and so is direction the producer gave (studio.project.imported_direction).
    """
    added = project.lexicon.add_missing(lexicon.entries, source="epub") if lexicon.entries else 0
    if added:
        log.info("%s: %d pronunciation(s) from the book added to the project's lexicon", name, added)
    if speech:
        apply_speech(project, speech)
    return added


def _import(manuscript: Path, max_sentence_chars: int, progress: ImportProgress | None = None) -> Manuscript:
    """Import, recording the absolute path so a reopen from another folder still matches."""
    from studio.text.importer import read_manuscript  # the text layer is imported on demand

    read = read_manuscript(manuscript, max_sentence_chars=max_sentence_chars, progress=progress)
    return replace(read, book=replace(read.book, source=str(manuscript.resolve())))


def _same_file(stored: str, manuscript: Path) -> bool:
    try:
        return Path(stored).resolve() == manuscript.resolve()
    except OSError:
        return False


def apply_choices(project: Project, *, voice_id: str | None = None, backend: str | None = None) -> ProjectSettings:
    """Apply command-line/GUI choices to an existing project's settings and return them.

    Changing voice or engine changes every cache key, so sentences re-render; the
    old audio stays cached and is reused if the choice is reverted. A new voice
    starts from its own recommended synthesis settings (a speaker id or scales
    tuned for the old voice would not fit it).
    """
    settings = project.settings()
    changes: dict[str, object] = {}
    if voice_id and voice_id != settings.voice_id:
        from studio.engine.voice.catalog import get_voice

        changes["voice_id"] = voice_id
        changes["synthesis"] = new_project_settings(get_voice(voice_id)).synthesis
    if backend and backend != settings.backend:
        changes["backend"] = backend
    if changes:
        settings = settings.with_changes(**changes)
        project.update_settings(settings)
        log.info("project settings changed: %s", changes)
    return settings


def new_project_settings(voice, backend: str = "onnx") -> ProjectSettings:  # voice: VoiceInfo
    """Settings for a new project: the voice author's recommended scales (and, for
    multi-speaker voices, its default speaker) as the starting point."""
    return ProjectSettings(voice_id=voice.id, backend=backend, synthesis=voice.default_settings)
