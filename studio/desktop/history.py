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
from dataclasses import dataclass
from typing import Any, TypeVar

from studio.desktop.session_parts import SessionParts
from studio.desktop.snapshot import BookSnapshot, build_snapshot
from studio.project.render_speed import seconds_per_sentence
from studio.stack.build import effective_preset
from studio.project.undo import UndoHistory

T = TypeVar("T")

#: a step's name in the menus and messages: what was changed, not the task's words ("Undo sentence edit",
#: not "Undo edit the sentence"); a step not listed keeps its own words
STEP_NAMES = {
    "edit the sentence": "sentence edit",
    "change the language": "language change",
    "change how the sentence is spoken": "spoken form change",
    "change the project settings": "settings change",
    "include the chapter": "chapter inclusion",
    "exclude the chapter": "chapter exclusion",
    "rename the chapter": "chapter name change",
    "merge the chapters": "chapter merge",
    "split the chapter": "chapter split",
    "change the pause": "pause change",
    "give the direction": "direction change",
    "change which front matter is read": "front matter choice",
    "change a pronunciation": "pronunciation change",
    "change who speaks the sentence": "speaker change",
    "turn casting on": "casting on",
    "turn casting off": "casting off",
}


def step_words(label: str | None) -> str | None:
    """A history step as the Edit menu and the status bar name it (None stays None)."""
    return None if label is None else STEP_NAMES.get(label, label)


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
        history = UndoHistory(project.db)

        def work() -> Replayed:
            before = {r.id for r in project.sentences() if r.state == "done"}
            label = step(history)
            if label is None:
                return Replayed(None, None, None, history.next_labels())
            snapshot = build_snapshot(project, long_chapter_minutes=minutes)
            # sentences that had audio before and lost it: their old audio is cached, render finds it
            again = tuple(s.id for c in snapshot.chapters for s in c.sentences if s.id in before and s.state != "done")
            settings = project.settings()
            measured = seconds_per_sentence(project.db, effective_preset(settings).name, settings.voice_id)
            return Replayed(label, settings, snapshot, history.next_labels(), again, measured)

        def done(value: Replayed) -> None:
            self.historyChanged.emit(value.labels)
            if value.label is None or value.snapshot is None:
                self.message.emit(none_word)
                return
            settings = value.settings
            if settings != self.settings:  # an edit of the text leaves the settings (and their listeners) alone
                old = self.settings
                if old is None or (old.voice_id, old.preset) != (settings.voice_id, settings.preset):
                    self.stats.seed(value.measured, restart=True)  # the voice's own speed
                self.settings = settings
                self.preview.set_voices(self.voice_for, settings.pauses)
                self.settingsChanged.emit(settings)
            self._set_snapshot(value.snapshot)
            self.message.emit(f"{done_word}: {step_words(value.label)}")
            if value.again:
                self.render_sentences(list(value.again), label=f"{done_word}: {step_words(value.label)}")

        self.tasks.run(work, on_done=done, action=("undo" if done_word == "Undone" else "redo") + " the last edit")


@dataclass(frozen=True)
class Replayed:
    """What an undo or redo did, worked out on the task thread: the step's label (None: nothing to do),
    the settings and the book after it, what Undo and Redo would do next, and the sentences it
    took away from their audio."""

    label: str | None
    settings: Any
    snapshot: BookSnapshot | None
    labels: tuple[str | None, str | None]
    again: tuple[int, ...] = ()
    measured: float | None = None  # synthesis seconds per sentence with these settings' voice and preset
