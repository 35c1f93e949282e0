"""What a voice family is: the one object its package exports (:class:`VoiceFamily`).

Why one object: listing voices, opening an engine for a preset, downloading by name,
the front end that shows a sentence's phonemes, the mixer and the cloner used to be
found by naming the family in five places above its package. Now each family package
(``studio.engine.piper``, ``.kokoro``, ``.coqui``) exports ``FAMILY``, a subclass of
:class:`VoiceFamily`; :mod:`studio.engine.families` lists them, one line each; and the
code above the engine asks a voice (:class:`~studio.engine.voice.info.VoiceInfo`) and
the registry, never a family by name.

Only :meth:`VoiceFamily.voices` and :meth:`VoiceFamily.open_engine` are required; the
rest (downloads, front end, mixer, cloning, preset words) default to "cannot".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol

from studio.core.errors import VoiceError

if TYPE_CHECKING:  # numpy and the engine interface only where an engine is opened
    import numpy as np

    from studio.core.lexicon import Lexicon
    from studio.engine.base import Engine
    from studio.engine.voice.info import VoiceInfo

#: ``progress(bytes_done, bytes_total_or_None)`` after every chunk of a download
Progress = Callable[[int, "int | None"], None]

#: one voice a family found: where (for the warning when it is unreadable) and how to describe it
Found = tuple[Path, Callable[[], "VoiceInfo"]]


@dataclass(frozen=True)
class FetchRequest:
    """How to fetch a name (``studio voices add NAME``, the desktop's library)."""

    voices_dir: Path
    #: the family's repository instead of its default (a mirror, the tests' local server)
    base_url: str | None = None
    timeout: float = 30.0
    force: bool = False
    #: the producer accepted a licence that asks (XTTS v2's)
    agree: bool = False
    progress: Progress | None = None
    #: the family's own list of models instead of its default (a mirror, the tests' local server)
    catalogue: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Fetched:
    """What a download gave: the file or folder, and the voice it is (None: a model, no voice)."""

    name: str
    path: Path
    voice: "VoiceInfo | None"


@dataclass(frozen=True)
class Offer:
    """Something the desktop's library can fetch beyond the Piper catalogue."""

    name: str
    language: str
    kind: str  # what it is, said in the Quality column
    installed: bool


@dataclass(frozen=True)
class LicenceNote:
    """What to tell the producer before a download; ``agreement``: ask before fetching."""

    name: str
    line: str
    agreement: bool


class FrontEnd(Protocol):
    """A voice's own text front end, as the listings and the lexicon checks need it."""

    def phonemes(self, text: str, language: str, lexicon: "Lexicon | None" = None) -> str:
        """What the voice is given for ``text``, as symbols ("" for nothing speakable)."""

    def unknown_phonemes(self, ipa: str) -> list[str]:
        """The symbols of ``ipa`` the voice cannot say (dropped at synthesis)."""


class Mixer(Protocol):
    """A family's voice mixer: voices blended by weight, heard as a sample, saved as a voice."""

    sample_text: str

    def mix(self, recipe: str) -> Any:
        """The blend ``recipe`` (``VOICE=WEIGHT,...``) describes; VoiceError names a bad part."""

    def sample(self, blend: Any, text: str) -> "tuple[np.ndarray, int]":
        """The blend speaking ``text``: audio and its sample rate."""

    def save(self, name: str, blend: Any) -> "VoiceInfo":
        """The blend stored as a named voice."""


class VoiceFamily:
    """One voice family. Subclasses set :attr:`name` and implement :meth:`voices` and
    :meth:`open_engine`; the rest is optional."""

    #: the registry name, stored in every :class:`VoiceInfo` it lists (``VoiceInfo.family``)
    name: str = ""
    #: preset name -> what that preset runs for this family's voices, in the family's own words
    #: (a preset it runs but does not describe is described by the shared table)
    preset_words: Mapping[str, str] = {}
    #: a name ``studio voices add`` fetches from this family, for messages ("" : it downloads nothing)
    fetch_example: str = ""
    #: the model it fetches by name that takes a voice from a recording, offered where none is
    #: installed ("" : it clones nothing)
    cloning_model: str = ""

    def voices(self, user_dir: Path | None, hub_dir: Path | None) -> Iterable[Found]:
        """Every voice of this family on this machine, in display order: in the user's voices
        folder (None: none there) and in the downloads folder of a library it uses (None:
        that library's own). Read without loading a model."""
        raise NotImplementedError

    def default_voice(self) -> "VoiceInfo | None":
        """The voice a project without one renders with, if this family ships it."""
        return None

    def open_engine(self, preset: Any, voice: "VoiceInfo", *, device: str | None = None,
                    threads: int | None = None, **kw: Any) -> "Engine":
        """An engine for ``voice`` under ``preset`` (a :class:`studio.engine.presets.Preset` that
        ``voice.abilities.presets`` names), constructed, not loaded. Typed loosely: the presets
        module reaches torch and TensorRT, and the import contracts count type-only imports too."""
        raise NotImplementedError

    def describe_preset(self, preset: str) -> str:
        """What ``preset`` runs for this family's voices, in its own words ("": the shared table says it)."""
        return self.preset_words.get(preset, "")

    # ------------------------------------------------------------------ downloads

    def fetches(self, name: str) -> bool:
        """Whether ``studio voices add NAME`` names something this family downloads."""
        return False

    def fetch(self, name: str, request: FetchRequest) -> Fetched:
        """Download ``name`` (checked; resumable where the family can); VoiceError says why not."""
        raise VoiceError(f"the {self.name} family downloads nothing")

    def offers(self, voices_dir: Path) -> tuple[Offer, ...]:
        """What the desktop's library offers to fetch (beyond a catalogue of its own)."""
        return ()

    def licence(self, name: str, catalogue: Mapping[str, Any] | None = None) -> LicenceNote:
        """The licence of ``name`` as a producer must read it before fetching ("" : said elsewhere)."""
        return LicenceNote(name, "", False)

    # ------------------------------------------------------------------ optional abilities

    def front_end(self, voice: "VoiceInfo") -> FrontEnd | None:
        """The voice's phoneme front end (None: it does not take phonemes)."""
        return None

    def mixer(self) -> Mixer | None:
        """The voice mixer of the voices whose abilities say ``mixing``."""
        return None

    def cloner(self) -> Any:
        """What takes a voice from a recording (``reference_rate(base)``, ``clone_voice(...)``),
        for the voices whose abilities say ``cloning``."""
        return None
