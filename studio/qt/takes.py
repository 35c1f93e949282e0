"""A sentence's takes as one frozen value for the takes panel.

Why a value of its own: the panel shows the takes, the space they use and which
one is chosen; reading them touches the database, so a background task builds
this and the panel only displays it.
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.project.store import Project
from studio.project.takes import MAX_TAKES, Take


@dataclass(frozen=True)
class TakeList:
    folder: str
    sentence_id: int
    takes: tuple[Take, ...]
    project_bytes: int
    limit: int = MAX_TAKES

    @property
    def bytes(self) -> int:
        return sum(t.size for t in self.takes)

    @property
    def chosen(self) -> Take | None:
        return next((t for t in self.takes if t.chosen), None)


def take_list(project: Project, sentence_id: int) -> TakeList:
    """Read the takes of a sentence (runs off the GUI thread)."""
    return TakeList(str(project.folder), sentence_id, tuple(project.takes.for_sentence(sentence_id)),
                    project.takes.size())
