"""What each sentence is rendered as: its spoken form, language, voice, lexicon entries,
direction and audio cache key -- worked out in one place, from plain values.

Why one pure module: the render, the export, the credits, proof-listening, the
estimates and the desktop must agree on what a sentence is spoken as, or a
sentence rendered by one would read "pending" to another. Everything here is a
function of a :class:`Version` of the project (what the store read from its
tables) and a sentence's own inputs; nothing reads a file or the database, so the
store can compute the renditions once per version and hand the same result to
every reader (:class:`Renditions`). The cache key's recipe stays
:func:`studio.project.cache.cache_key`; this module decides what goes into it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from studio.core.language import language_family
from studio.core.lexicon import Lexicon
from studio.engine.base import SynthesisSettings
from studio.project import unvoiced
from studio.project.cache import VoiceIdentity, cache_key
from studio.project.cast import Part, cast_key_part
from studio.project.direction import Direction
from studio.project.settings import ProjectSettings
from studio.text import content
from studio.text.normalize import spoken_form


@dataclass(frozen=True)
class Version:
    """What every sentence of one version of a project is rendered with, besides its own inputs.

    The project's settings that shape audio (voice, voices per language, engine
    token, synthesis settings, the policy for unvoiced passages -- not its pauses:
    silence between clips renders nothing again). ``voice_language`` is the language
    family the default voice speaks; None when the voice is not installed here.
    ``voice_languages`` is the family each voice a character is cast with speaks ("" when
    it is not installed here): such a character speaks its part in that language.
    ``book_language`` is where the "book" policy sends an unvoiced passage.
    """

    voice_id: str
    engine: str
    synthesis: SynthesisSettings
    book_language: str
    voice_language: str | None
    language_voices: Mapping[str, str] = field(default_factory=dict)
    unvoiced: str = "native"
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    lexicon: Lexicon = Lexicon()
    voice_languages: Mapping[str, str] = field(default_factory=dict)
    silent: frozenset[str] = frozenset()  # the kinds of paragraph left silent (studio.text.content)

    @classmethod
    def of(cls, settings: ProjectSettings, *, book_language: str, voice_language: str | None,
           fingerprints: Mapping[str, str], lexicon: Lexicon, voice_languages: Mapping[str, str] | None = None
           ) -> Version:
        return cls(settings.voice_id, settings.engine_token, settings.synthesis, book_language, voice_language,
                   dict(settings.language_voices), settings.unvoiced, dict(fingerprints), lexicon,
                   dict(voice_languages or {}),
                   content.silent_kinds(settings.notes, settings.images, settings.tables, settings.code))

    def voice_for(self, language: str) -> str:
        return voice_for(self.language_voices, self.voice_id, language)

    def said(self, language: str, kind: str = "") -> str:
        """The language handed to the voice's front end, or ``skip/<lang>``: a paragraph of a kind the
        project leaves silent (:mod:`studio.text.content`), or unvoiced (:mod:`studio.project.unvoiced`)."""
        if kind in self.silent:
            return unvoiced.SKIPPED + language
        return unvoiced.said(self.unvoiced, self.language_voices, self.book_language, self.voice_language, language)


def voice_for(language_voices: Mapping[str, str], default: str, language: str) -> str:
    """Voice id for a language: its mapped voice, else the project's default voice."""
    family = language_family(language) or language.lower()
    return language_voices.get(family) or default


@dataclass(frozen=True)
class SentenceInputs:
    """A sentence's own inputs: its printed text, effective language, the producer's
    spoken-form override (None: the normaliser's), direction (rate, emphasis), cast and
    its paragraph's kind (a note, a caption...: :mod:`studio.text.content`; "" prose)."""

    text: str
    language: str
    override: str | None = None
    direction: Direction | None = None
    cast: tuple[Part, ...] = ()  # who speaks its quoted parts, with which voice (casting on), else ()
    kind: str = ""


@dataclass(frozen=True)
class PartRendition:
    """One quoted or narrated part of a cast sentence as its voice is given it: ``language``
    is what it is said in (its voice's family when that differs from the sentence's, else
    the sentence's ``said``), and ``spoken`` is written out in it."""

    printed: str
    spoken: str
    language: str
    lexicon: Lexicon


@dataclass(frozen=True)
class Rendition:
    """What one sentence is rendered as.

    ``synthesis`` is the sentence's own settings when its direction changes them
    (a rate, stressed words), else None (the project's). ``key`` is its audio
    cache key: audio made for another key is not this sentence's.
    """

    text: str
    spoken: str
    language: str
    said: str
    voice_id: str
    lexicon: Lexicon
    synthesis: SynthesisSettings | None
    key: str
    cast: tuple[Part, ...] = ()
    parts: tuple[PartRendition, ...] = ()  # the cast parts' words, in the order of ``cast``


def spoken_words(text: str, language: str, said: str, lexicon: Lexicon, override: str | None = None) -> str:
    """The words the voice is given for one sentence.

    ``said`` is the language its front end reads it in (the project's unvoiced policy
    may make that the book's); a skipped passage is normalised in its own language.
    Lexicon entries that apply keep their printed words, so the entry still wins.
    """
    if override:
        return override
    family = "" if said.startswith(unvoiced.SKIPPED) else language_family(said)
    return spoken_form(text, family or language_family(language) or "en", lexicon)


def render_as(version: Version, inputs: SentenceInputs, *, voice_id: str | None = None) -> Rendition:
    """One sentence's (or a credits line's) rendition; ``voice_id`` None: its language's voice."""
    base = version.synthesis
    voice = voice_id or version.voice_for(inputs.language)
    used = version.lexicon.applicable(inputs.text, inputs.language)
    said = version.said(inputs.language, inputs.kind)
    spoken = spoken_words(inputs.text, inputs.language, said, used, inputs.override)
    own = inputs.direction.synthesis(base, inputs.text, spoken) if inputs.direction is not None else base
    parts = tuple(_part(inputs.text[p.start:p.end], inputs.language, _part_language(version, p, inputs.language, said),
                        used) for p in inputs.cast)
    foreign = [p.language for p in parts] if any(p.language != said for p in parts) else []
    key = cache_key(
        text=spoken, language=said, voice=VoiceIdentity(voice, version.fingerprints.get(voice, "")),
        engine=version.engine, settings_token=own.cache_token(), lexicon=used.digest(),
        cast=cast_key_part(inputs.cast, version.fingerprints, foreign),
    )
    return Rendition(inputs.text, spoken, inputs.language, said, voice, used, None if own is base else own, key,
                     inputs.cast, parts)


def _part_language(version: Version, part: Part, language: str, said: str) -> str:
    """What a part is said in: a character's voice of another language family speaks its own."""
    voice = part.casting.voice_id if part.casting is not None else ""
    families = (version.voice_languages.get(voice, "") if voice else "").split(",")  # "en,fr": multilingual
    return families[0] if families[0] and language_family(language) not in families else said


def _part(printed: str, language: str, said: str, lexicon: Lexicon) -> PartRendition:
    """``said`` is the part's own language (:func:`_part_language`); its lexicon entries are the sentence's."""
    used = lexicon.applicable(printed, language) if lexicon else lexicon
    return PartRendition(printed, spoken_words(printed, language, said, used), said, used)


#: called with the number of renditions each time some are computed (not when reused):
#: how the desktop's tests prove that none is computed on the GUI thread
_watchers: list[Callable[[int], None]] = []


def watch(listener: Callable[[int], None]) -> Callable[[], None]:
    """Hear every computation of renditions; returns the call that stops listening."""
    _watchers.append(listener)
    return lambda: _watchers.remove(listener)


class Renditions:
    """Every sentence's rendition for the newest version seen, kept between reads.

    Why kept per sentence with its inputs: a new version (an edit, an override, a
    settings change) recomputes only the sentences whose own inputs changed when the
    :class:`Version` is the same, and all of them when it is not; a read with nothing
    changed computes nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: Version | None = None
        self._kept: dict[int, tuple[SentenceInputs, Rendition]] = {}

    def update(self, version: Version, sentences: Mapping[int, SentenceInputs]) -> dict[int, Rendition]:
        """The renditions of ``sentences`` (id -> inputs) in ``version``; computes what changed."""
        with self._lock:
            kept = self._kept if version == self._version else {}
            out: dict[int, tuple[SentenceInputs, Rendition]] = {}
            computed = 0
            for sid, inputs in sentences.items():
                old = kept.get(sid)
                if old is not None and old[0] == inputs:
                    out[sid] = old
                else:
                    out[sid] = (inputs, render_as(version, inputs))
                    computed += 1
            self._version, self._kept = version, out
        if computed:
            for listener in list(_watchers):
                listener(computed)
        return {sid: r for sid, (_i, r) in out.items()}


__all__ = ["Rendition", "Renditions", "SentenceInputs", "Version", "render_as", "spoken_words", "voice_for",
           "watch"]
