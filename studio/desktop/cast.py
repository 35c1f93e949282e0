"""The Cast dock's controller: the characters read and changed off the GUI thread.

Why through the session's task runner: every change of the cast (a voice, a merge, a
line spoken by someone else) finds the lines again or changes sentence keys, so it
is database work, in the same order as the other edits; the tree is rebuilt after
it (:meth:`ProjectSession.refresh`) so its speakers and states follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from studio.project.cast import Casting, CastMember
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
    and the installed voices a character can be given."""

    folder: str
    enabled: bool
    members: tuple[CastMember, ...]
    unattributed: int
    voices: tuple[VoiceSpeakers, ...] = ()


def installed_voices() -> tuple[VoiceSpeakers, ...]:
    """Every installed voice, with the speakers of the multi-speaker ones (reads the disk)."""
    from studio.engine.voice.catalog import list_voices
    from studio.engine.voice.config import VoiceConfig

    out = []
    for voice in list_voices():
        speakers: tuple[tuple[int, str], ...] = ()
        if voice.backend == "piper":
            config = VoiceConfig.from_file(voice.config_path)
            if config.num_speakers > 1:
                names = {i: n for n, i in config.speaker_id_map.items()}
                speakers = tuple((i, names.get(i, str(i))) for i in range(config.num_speakers))
        out.append(VoiceSpeakers(voice.id, voice.name, speakers, voice.language_family))
    return tuple(out)


def cast_view(project: Project) -> CastView:
    """Read the cast (off the GUI thread); lines are found the first time."""
    cast = project.cast
    if not cast.analysed():
        cast.analyse()
    return CastView(str(project.folder), cast.enabled(), tuple(cast.members()), len(cast.unattributed()),
                    installed_voices())


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

    def _change(self, work, action: str) -> None:
        project = self.session.project
        if project is None:
            return

        def run() -> CastView:
            work(project.cast)
            return cast_view(project)

        def done(view: CastView) -> None:
            self.viewChanged.emit(view)
            self.session.refresh()

        self.session.tasks.run(self.session._undoable(action, run), on_done=done, action=action)

    def set_enabled(self, on: bool) -> None:
        self._change(lambda cast: cast.set_enabled(on), "turn casting on" if on else "turn casting off")

    def set_casting(self, name: str, casting: Casting) -> None:
        """A character's voice; with casting on, its lines are queued as one render job."""
        project = self.session.project
        if project is None:
            return

        def run() -> tuple[CastView, list[int]]:
            project.cast.set_casting(name, casting)
            return cast_view(project), project.cast.sentences_of(name) if project.cast.enabled() else []

        def done(result: tuple[CastView, list[int]]) -> None:
            view, ids = result
            self.viewChanged.emit(view)
            self.session.refresh()
            if ids:
                self.session.render_sentences(ids, label=f"Recast {name}: {len(ids)} sentence(s)")

        self.session.tasks.run(self.session._undoable(f"cast {name}", run), on_done=done, action=f"cast {name}")

    def merge(self, keep: str, other: str) -> None:
        self._change(lambda cast: (cast.merge(keep, other), cast.analyse()), f"merge {other} into {keep}")

    def rename(self, old: str, new: str) -> None:
        """The character is called ``new`` (kept through a re-import: ``old`` becomes its alias)."""
        self._change(lambda cast: (cast.rename(old, new), cast.analyse()), f"rename {old} to {new}")

    def set_speaker(self, sentence_id: int, name: str) -> None:
        """ "Spoken by...": the sentence's quoted lines are ``name``'s ("" the narrator's)."""
        self._change(lambda cast: cast.correct(sentence_id, name), "change who speaks the sentence")
