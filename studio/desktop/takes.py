"""A sentence's takes as one frozen value for the takes panel, and the session's take commands.

Why a value of its own: the panel shows the takes, the space they use and which
one is chosen; reading them touches the database, so a background task builds
this and the panel only displays it.

Why the commands are a mixin of :class:`~studio.desktop.session.ProjectSession` (like
:class:`~studio.desktop.chapter_edits.ChapterEdits`): the window asks the one session
for everything, but reading, choosing and playing takes shares nothing with the
session's other commands beyond its task runner, its project and how it publishes
a changed chapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from studio.project.store import Project
from studio.project.takes import MAX_TAKES, Take
from studio.desktop.session_parts import SessionParts
from studio.desktop.snapshot import ChapterNode, build_chapter



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

    def number(self, take_id: int) -> int:
        """The take's number as the producer sees it: 1, 2, ... in the order this sentence's takes were
        made (the project-wide id, "take 23", means nothing to them)."""
        return next((n for n, t in enumerate(self.takes, 1) if t.id == take_id), 0)


def take_list(project: Project, sentence_id: int) -> TakeList:
    """Read the takes of a sentence (runs off the GUI thread)."""
    return TakeList(str(project.folder), sentence_id, tuple(project.takes.for_sentence(sentence_id)),
                    project.takes.size())


class TakeCommands:
    """Take commands of the session (mixed into ``ProjectSession``)."""

    def load_takes(self: SessionParts, sentence_id: int) -> None:
        """Read a sentence's takes in the background; they arrive as ``takesChanged``."""
        project = self._need()
        self.tasks.run(lambda: take_list(project, sentence_id), on_done=self._takes_read, action="read the takes")

    def choose_take(self: SessionParts, sentence_id: int, take_id: int) -> None:
        """Use a take from now on (export and playback read it); the choice is stored in the project."""
        project, snap = self._need(), self._snap()
        chapter = next((s.chapter for c in snap.chapters for s in c.sentences if s.id == sentence_id), 0)

        def work() -> tuple[ChapterNode, TakeList]:
            project.takes.choose(sentence_id, take_id)
            return build_chapter(project, snap, chapter), take_list(project, sentence_id)

        def done(value: tuple[ChapterNode, TakeList]) -> None:
            self._chapter_done(value[0])
            self._takes_read(value[1])
            self.message.emit(f"Take {value[1].number(take_id)} is used from now on")

        self.tasks.run(work, on_done=done, action="choose the take")

    def play_takes(self: SessionParts, sentence_id: int, take_ids: Sequence[int], label: str = "") -> int:
        """Play takes one after the other; ``label`` names them as the panel numbers them."""
        label = label or " then ".join("a take" for _ in take_ids)
        return self.preview.play_takes([(t, sentence_id) for t in take_ids], label)

    def _takes_read(self: SessionParts, takes: TakeList) -> None:
        if self.project is not None and takes.folder == str(self.project.folder):
            self.takesChanged.emit(takes)
