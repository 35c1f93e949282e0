"""The producer's chapter changes, as the session runs them: include, rename, merge, split.

Why a mixin of :class:`~studio.desktop.session.ProjectSession` and not more session
code: the session is the one object the window talks to, but it is already as
long as a module should be; these methods share nothing with it but its task
runner, its project and how it publishes a new snapshot.

Include and rename change one chapter (``chapterChanged``); merge and split
change the chapters' positions, so the whole book is read again
(``snapshotChanged``; the tree moves the rows concerned in place). They are
refused while chapter renders wait or run: those jobs name chapters by
position, and a merge or split would point them at other text.
"""

from __future__ import annotations

from collections.abc import Callable

from studio.core.words import counted
from studio.project.front_matter import set_read_front_matter
from studio.project.direction import set_direction
from studio.project.emphasis import set_emphasis
from studio.project.pauses import set_pause_after
from studio.project.store import Project
from studio.desktop.messages import FINISHED, ErrorInfo
from studio.desktop.session_parts import SessionParts
from studio.desktop.snapshot import BookSnapshot, ChapterNode, build_chapter, build_snapshot



class ChapterEdits:
    """Chapter commands of the session (mixed into ``ProjectSession``)."""

    def set_chapter_included(self: SessionParts, chapter: int, included: bool) -> None:
        """Include or exclude a chapter (front matter too): Render Book and export follow."""
        self._chapter_change(chapter, lambda p: p.chapter_control.set_included(chapter, included),
                             "include the chapter" if included else "exclude the chapter")

    def rename_chapter(self: SessionParts, chapter: int, name: str) -> None:
        """Rename a chapter (blank: the imported title); exported files and tags use the name."""
        self._chapter_change(chapter, lambda p: p.chapter_control.rename(chapter, name), "rename the chapter")

    def merge_chapter(self: SessionParts, chapter: int) -> None:
        """Merge a chapter with the next one; every sentence keeps its audio."""
        self._structure_change(lambda p: p.chapter_control.merge_with_next(chapter), "merge the chapters")

    def split_chapter(self: SessionParts, chapter: int, paragraph: int) -> None:
        """Split a chapter before one of its paragraphs; every sentence keeps its audio."""
        self._structure_change(lambda p: p.chapter_control.split(chapter, paragraph), "split the chapter")

    def set_pause_after(self: SessionParts, sentence_id: int, seconds: float | None) -> None:
        """The pause after one sentence (None: the project's); re-renders nothing, export and
        estimates follow (:mod:`studio.project.pauses`)."""
        snap = self._snap()
        chapter = next((s.chapter for c in snap.chapters for s in c.sentences if s.id == sentence_id), None)
        if chapter is None:
            self.error.emit(ErrorInfo(f"there is no sentence {sentence_id}", "Could not change the pause"))
            return
        self._chapter_change(chapter, lambda p: set_pause_after(p.db, sentence_id, seconds), "change the pause")

    def set_direction(self: SessionParts, ids: list[int], rate: float, pause_before: float,
                      pause_after: float | None, render: bool = True,
                      emphasis: dict[int, tuple[int, ...]] | None = None) -> None:
        """Direction for some sentences (studio.project.direction): only a changed rate or
        changed stressed words (``emphasis``: id -> word indices; None keeps them) change their
        keys; with ``render`` those are rendered again at once (urgent when few)."""
        project, snap = self._need(), self._snap()
        chapters = sorted({s.chapter for c in snap.chapters for s in c.sentences if s.id in set(ids)})
        old = {s.id: (s.direction.rate or 1.0, s.direction.emphasis)
               for c in snap.chapters for s in c.sentences if s.id in set(ids)}

        def work() -> list[ChapterNode]:
            set_direction(project.db, ids, rate=rate, pause_before=pause_before)
            if emphasis is not None:
                set_emphasis(project.db, ids, emphasis)
            for sid in ids:
                set_pause_after(project.db, sid, pause_after)
            return [build_chapter(project, snap, c) for c in chapters]

        def done(nodes: list[ChapterNode]) -> None:
            for node in nodes:
                self._chapter_done(node)
            rerender = [i for i in ids if old.get(i, (1.0, ()))[0] != rate
                        or (emphasis is not None and tuple(emphasis.get(i, ())) != old.get(i, (1.0, ()))[1])]
            if render and rerender:
                self.render_sentences(rerender, label=f"Direction: {counted(len(rerender), 'sentence')}")

        self.tasks.run(self._undoable("give the direction", work), on_done=done, action="give the direction")

    def set_read_front_matter(self: SessionParts, on: bool) -> None:
        """The book-level choice: read the epigraphs, extracts, etymology... (never contents,
        copyright or title pages); chapters decided by hand keep their decision."""
        project, minutes = self._need(), self.long_chapter_minutes

        def work() -> BookSnapshot:
            set_read_front_matter(project.db, on)
            return build_snapshot(project, long_chapter_minutes=minutes)

        self.tasks.run(self._undoable("change which front matter is read", work), on_done=self._set_snapshot,
                       action="change which front matter is read")

    def _chapter_change(self: SessionParts, chapter: int, change: Callable[[Project], None], action: str) -> None:
        project, snap = self._need(), self._snap()

        def work() -> ChapterNode:
            change(project)
            return build_chapter(project, snap, chapter)

        self.tasks.run(self._undoable(action, work), on_done=self._chapter_done, action=action)

    def _structure_change(self: SessionParts, change: Callable[[Project], None], action: str) -> None:
        project, minutes = self._need(), self.long_chapter_minutes
        busy = [j for j in self._need_queue().snapshot().jobs if j.status not in FINISHED and j.spec.chapters]
        if busy:
            self.error.emit(ErrorInfo(f"cannot {action} while chapter renders are queued or running "
                                      f"({busy[0].spec.label}); let them finish or cancel them first",
                                      f"Could not {action}"))
            return

        def work() -> BookSnapshot:
            change(project)
            return build_snapshot(project, long_chapter_minutes=minutes)

        self.tasks.run(self._undoable(action, work), on_done=self._set_snapshot, action=action)
