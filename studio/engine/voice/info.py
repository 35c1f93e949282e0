"""One installed voice (:class:`VoiceInfo`) and what it can do (:class:`VoiceAbilities`).

Why its own module: every voice family builds these (:mod:`studio.engine.families`) and
the catalogue lists them; both import this, and it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from studio.core.language import language_family
from studio.engine.base import SynthesisSettings


@dataclass(frozen=True)
class VoiceAbilities:
    """What a voice can do. The code above the engine asks these, never which family
    (Piper, Coqui, Kokoro) a voice belongs to, so a new family needs no change there."""

    #: ISO 639-1 families it speaks, its own first
    languages: tuple[str, ...] = ()
    #: speaker names by speaker id (empty: one speaker)
    speakers: tuple[str, ...] = ()
    #: the presets that can run it (:mod:`studio.engine.presets`), in display order
    presets: tuple[str, ...] = ()
    #: several sentences in one call are faster, and each item's audio is its own
    batching: bool = False
    #: it speaks the IPA of the studio's espeak-ng front end, so a lexicon's phoneme entries apply
    phoneme_input: bool = False
    #: it can be exported to a Triton model repository and rendered there
    triton: bool = False
    #: the piper command line speaks it: `studio bench`'s reference
    piper_cli: bool = False
    #: it takes a speaker from a reference recording
    cloning: bool = False
    #: it can be blended by weight with others that can into a new named voice (the voice mixer)
    mixing: bool = False


@dataclass(frozen=True)
class VoiceInfo:
    """One installed voice, enough to load it and to show it in a list.

    ``language`` is the voice's own code as its config states it (``en_US``,
    ``fr``); :attr:`language_family` gives the ISO 639-1 part.
    """

    id: str
    name: str
    #: the registry name of its family (:mod:`studio.engine.families`); only the engine layer reads it
    family: str
    language: str
    sample_rate: int
    model_path: Path
    config_path: Path
    source: Literal["bundled", "user", "coqui-hub", "prepared"]
    #: recorded phoneme ids (:class:`~studio.engine.voice.phonemize.RecordedFrontEnd`)
    #: used instead of espeak-ng, on machines that only run the model
    phoneme_ids: Path | None = None
    abilities: VoiceAbilities = VoiceAbilities()
    #: the voice author's recommended synthesis settings (a new project starts from them)
    default_settings: SynthesisSettings = SynthesisSettings()
    #: a voice taken from a recording: the recorded person's consent statement (credits, manifest)
    consent: str = ""
    #: the weights' licence where the voice states one (a non-commercial one is said at export)
    licence: str = ""
    #: the licence said plainly when it forbids selling what the voice makes ("" when it does not)
    not_for_sale: str = ""

    @property
    def language_family(self) -> str:
        return language_family(self.language)

    @property
    def languages_label(self) -> str:
        """The languages it speaks as every list shows them: ``ja, en`` for a voice that speaks
        several, else its own code (``en_US``)."""
        spoken = self.abilities.languages
        return ", ".join(spoken) if len(spoken) > 1 else self.language or "?"
