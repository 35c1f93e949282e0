"""The Cast dock's controller: the characters read and changed off the GUI thread.

Why through the session's task runner: every change of the cast (a voice, a merge, a
line spoken by someone else) finds the lines again or changes sentence keys, so it
is database work, in the same order as the other edits; the tree is rebuilt after
it (:meth:`ProjectSession.refresh`) so its speakers and states follow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from studio.core.words import counted
from studio.project.cast import Casting, CastMember, ProjectCast, QuotedLine
from studio.project.store import Project


@dataclass(frozen=True)
class VoiceSpeakers:
    """An installed voice as the Voice... dialog offers it, with its speakers when it has several."""

    voice_id: str
    name: str
    speakers: tuple[tuple[int, str], ...] = ()  # (speaker id, its name)
    language: str = ""  # the voice's language family ("en", "fr")


@dataclass(frozen=True)
class CastView:
    """What the dock shows: casting on or off, the characters, how many lines no rule attributed,
    the installed voices a character can be given, and the lines to review (not sure)."""

    folder: str
    enabled: bool
    members: tuple[CastMember, ...]
    unattributed: int
    voices: tuple[VoiceSpeakers, ...] = ()
    review: tuple[QuotedLine, ...] = ()


def installed_voices() -> tuple[VoiceSpeakers, ...]:
    """Every installed voice, with the speakers of the multi-speaker ones (reads the disk)."""
    from studio.engine.voice.catalog import list_voices

    return tuple(VoiceSpeakers(voice.id, voice.name, tuple(enumerate(voice.abilities.speakers)), voice.language_family)
                 for voice in list_voices())


def merge_proposal(other: str, names: list[str], selected: tuple[str, ...] = ()) -> int:
    """Which of ``names`` the Merge dialog proposes for ``other``: another selected row, else
    the one sharing a name word with it ("Ahab" and "Captain Ahab", "Mr. Stubb" and "Stubb"),
    else the character with most lines (the first)."""
    for name in selected:
        if name != other and name in names:
            return names.index(name)
    words = {w.strip(".,").lower() for w in other.split() if w[:1].isupper() and len(w.strip(".,")) > 2}
    words -= {"the", "mr", "mrs", "miss", "captain", "sir", "lady", "old", "little"}
    for i, name in enumerate(names):
        if words & {w.strip(".,").lower() for w in name.split()}:
            return i
    return 0


def cast_view(project: Project) -> CastView:
    """Read the cast (off the GUI thread); lines are found the first time."""
    cast = project.cast
    if not cast.analysed():
        cast.analyse()
    return CastView(str(project.folder), cast.enabled(), tuple(cast.members()), len(cast.unattributed()),
                    installed_voices(), tuple(cast.review()))


class CastController(QObject):
    """Cast commands for a :class:`~studio.desktop.session.ProjectSession`'s project."""

    viewChanged = Signal(object)  # CastView

    def __init__(self, session: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        session.opened.connect(lambda _snap: self.refresh())
        session.closed.connect(lambda: self.viewChanged.emit(CastView("", False, (), 0)))

    def refresh(self) -> None:
        project = self.session.project
        if project is not None:
            self.session.tasks.run(lambda: cast_view(project), on_done=self.viewChanged.emit, action="read the cast")

    def _change(self, work: Callable[[ProjectCast], object], action: str, label: str = "") -> None:
        """Run a cast change off the GUI thread; with ``label``, queue the sentences it made stale.

        Why only those: a sentence's key carries its parts' voices, so the rows that were
        rendered and current before the change and are not after it are exactly the audio
        the change replaces; a sentence never rendered stays for the producer's own render,
        and a change that changes no voice (a dialog closed as it was, a rename) queues nothing.
        """
        project = self.session.project
        if project is None:
            return

        def run() -> tuple[CastView, list[int]]:
            before = {r.id for r in project.sentences() if r.state == "done"} if label else set()
            work(project.cast)
            stale = [r.id for r in project.sentences() if r.id in before and r.state != "done"] if label else []
            return cast_view(project), stale

        def done(result: tuple[CastView, list[int]]) -> None:
            view, ids = result
            self.viewChanged.emit(view)
            self.session.refresh()
            if ids:
                self.session.render_sentences(ids, label=f"{label}: {counted(len(ids), 'sentence')}")

        self.session.tasks.run(self.session._undoable(action, run), on_done=done, action=action)

    def set_enabled(self, on: bool) -> None:
        self._change(lambda cast: cast.set_enabled(on), "turn casting on" if on else "turn casting off")

    def set_casting(self, name: str, casting: Casting) -> None:
        """A character's voice; the lines it changes that were rendered are queued as one job."""
        self._change(lambda cast: cast.set_casting(name, casting), f"cast {name}", label=f"Recast {name}")

    def merge(self, keep: str, other: str) -> None:
        self._change(lambda cast: (cast.merge(keep, other), cast.analyse()), f"merge {other} into {keep}",
                     label=f"Merge {other} into {keep}")

    def rename(self, old: str, new: str) -> None:
        """The character is called ``new`` (kept through a re-import: ``old`` becomes its alias)."""
        self._change(lambda cast: (cast.rename(old, new), cast.analyse()), f"rename {old} to {new}",
                     label=f"Rename {old} to {new}")

    def split(self, name: str) -> None:
        """A name or descriptor tied to a character becomes a character of its own."""
        self._change(lambda cast: cast.split(name), f"split {name}", label=f"Split {name}")

    def set_speaker(self, sentence_id: int, name: str) -> None:
        """ "Spoken by...": the sentence's quoted lines are ``name``'s ("" the narrator's)."""
        self._change(lambda cast: cast.correct(sentence_id, name), "change who speaks the sentence",
                     label=f"Spoken by {name or 'the narrator'}")
