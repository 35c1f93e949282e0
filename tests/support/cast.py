"""A chapter with a narrator and two characters, and its project (noise off: the same input, the same audio)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from studio.engine.voice.catalog import get_voice
from support.voice import DETERMINISTIC
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.store import Project

CHAPTER = """# The Harbour

The night was calm over the harbour, and the lamps were lit.

"Where are you going at this hour?" asked Mary.

"To the lighthouse," said Tom. "I will be back before the morning comes."

"Then take the lamp with you, Tom."

"I have it here," he said.

He went out, and the door closed behind him.
"""


def cast_project(tmp_path: Path) -> Project:
    ms = tmp_path / "harbour.md"
    ms.write_text(CHAPTER, encoding="utf-8")
    settings = new_project_settings(get_voice(None))
    settings = replace(settings, synthesis=DETERMINISTIC)
    return open_for_manuscript(ms, tmp_path / "harbour.studio", settings).project


