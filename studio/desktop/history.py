"""Edit > Undo and Redo for the session: each producer edit one step of the project's history.

Why the session wraps its edits and the project keeps the steps
(:class:`studio.project.undo.UndoHistory`): what an edit changed is known to the
database alone (an edit moves stressed words, quoted parts, paragraphs...), and the
history must outlive the window. The session only names each step (the words of its
task: "edit the sentence", "merge the chapters") and, after an undo or redo, reads
the book again and renders the sentences it took away from their audio (the old audio
is still cached, so they come back at once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from studio.desktop.session_parts import SessionParts
from studio.desktop.snapshot import BookSnapshot, build_snapshot
from studio.project.undo import UndoHistory

T = TypeVar("T")


class EditHistory:
    """Undo / redo commands of the session (mixed into ``ProjectSession``)."""

    def _undoable(self: SessionParts, label: str, work: Callable[[], T]) -> Callable[[], T]:
        """``work`` (run on the task thread) as one step named ``label``; Undo's words follow."""
        history = UndoHistory(self._need().db)
        emit = self.historyChanged.emit

        def run() -> T:
            with history.step(label):
                out = work()
            emit(history.next_labels())
            return out

        return run

    def undo(self: Any) -> None:
        self._replay(lambda h: h.undo(), "Undone", "Nothing to undo")

    def redo(self: Any) -> None:
        self._replay(lambda h: h.redo(), "Redone", "Nothing to redo")

    def read_history(self: Any) -> None:
        """Ask what Undo and Redo would do (``historyChanged``), e.g. when a project opens."""
        history = UndoHistory(self._need().db)
        self.tasks.run(history.next_labels, on_done=self.historyChanged.emit, action="read the undo history")

    def _replay(self: Any, step: Callable[[UndoHistory], str | None], done_word: str, none_word: str) -> None:
        if self.project is None:
            return
        project, minutes = self._need(), self.long_chapter_minutes
        before = {s.id: s.state for c in self._snap().chapters for s in c.sentences}
        history = UndoHistory(project.db)

        def work() -> tuple[str | None, Any, BookSnapshot | None, tuple[str | None, str | None]]:
            label = step(history)
            if label is None:
                return None, None, None, history.next_labels()
            return label, project.settings(), build_snapshot(project, long_chapter_minutes=minutes), history.next_labels()

        def done(value: tuple[str | None, Any, BookSnapshot | None, tuple[str | None, str | None]]) -> None:
            label, settings, snapshot, labels = value
            self.historyChanged.emit(labels)
            if label is None or snapshot is None:
                self.message.emit(none_word)
                return
            self.settings = settings
            self.preview.set_voices(self.voice_for, settings.pauses)
            self.settingsChanged.emit(settings)
            self._set_snapshot(snapshot)
            self.message.emit(f"{done_word}: {label}")
            # sentences that had audio before and lost it: their old audio is cached, render finds it
            again = [s.id for c in snapshot.chapters for s in c.sentences
                     if before.get(s.id) == "done" and s.state != "done"]
            if again:
                self.render_sentences(again, label=f"{done_word}: {label}")

        self.tasks.run(work, on_done=done, action=("undo" if done_word == "Undone" else "redo") + " the last edit")
