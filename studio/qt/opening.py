"""Opening what the user points at: a project folder, or a manuscript (its project made or resumed).

Why apart from the session: these run on the task thread and only touch the
project and jobs layers; the session decides when, and installs the result.
"""

from __future__ import annotations

from pathlib import Path

from studio.core.errors import StudioError
from studio.project.store import Project


def open_any(path: str | Path, max_sentence_chars: int = 500) -> tuple[Project, str]:
    """A project folder, or a manuscript (its project ``<name>.studio`` beside it is made or resumed)."""
    from studio.engine.voice.catalog import get_voice
    from studio.jobs.session import default_project_dir, new_project_settings, open_for_manuscript

    path = Path(path)
    if path.is_dir():
        if Project.is_project(path):
            return Project.open(path), "opened"
        raise StudioError(f"{path} is a folder but not a studio project; open a manuscript file or a project folder")
    if not path.exists():
        raise StudioError(f"{path}: no such file or folder")
    folder = default_project_dir(path, path.parent)
    opened = open_for_manuscript(path, folder, new_project_settings(get_voice(None)), max_sentence_chars=max_sentence_chars)
    return opened.project, opened.action


def create_project(manuscript: str | Path, folder: str | Path) -> tuple[Project, str]:
    from studio.engine.voice.catalog import get_voice
    from studio.jobs.session import new_project_settings, open_for_manuscript

    opened = open_for_manuscript(Path(manuscript), Path(folder), new_project_settings(get_voice(None)))
    return opened.project, opened.action
