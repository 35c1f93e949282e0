"""Opening and closing credits, the synthetic-narration disclosure, and the retail sample.

Why here: stores (ACX, Findaway, Apple) ask for a complete package -- opening
credits (title, author, narrator), closing credits ("The end", copyright,
production), a 1-5 minute retail sample -- and require that synthetic narration
be said plainly. The credits are spoken with the project's own voice through the
render path's one synthesizer (:func:`studio.rendering.synthesizer.each_synthesizer`, the
engine from :func:`studio.stack.build.build_engine`) and kept in the project's
audio cache (:mod:`studio.project.credit_keys`), so a second export speaks
nothing again; the sample is cut from audio that is already rendered.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from studio.audio.assemble import Clip
from studio.core.errors import ProjectError, StudioError
from studio.engine.base import Engine
from studio.delivery.export import spoken_heading
from studio.delivery.rights import copyright_for
from studio.project.credit_keys import record_entry, text_renditions
from studio.project.store import Project
from studio.project.records import SentenceRow
from studio.text.segment import normalize_text, split_paragraphs, split_sentences

log = logging.getLogger(__name__)

#: The retail sample's length limits and default, in seconds (stores: 1-5 minutes).
SAMPLE_MIN_S, SAMPLE_MAX_S, SAMPLE_DEFAULT_S = 60.0, 300.0, 180.0


def voice_name(project: Project) -> str:
    """The project voice's name as a listener would say it: "Joe" for the catalog's
    "Joe (en_US, medium)" (the rest is for choosing a voice, and a voice reading
    "en underscore US" aloud in the credits helps nobody); its id when not installed here."""
    return _voice_called(project.settings().voice_id)


def default_narrator(project: Project) -> str:
    """``Synthetic voice (<voice name>)``: what the narrator tag says unless the producer says otherwise."""
    return f"Synthetic voice ({voice_name(project)})"


def disclosure(project: Project) -> str:
    """The one sentence, in tags, manifest and closing credits, that says the narration is synthetic
    (and, for a voice taken from a recording, the recorded person's consent)."""
    said = (f"This audiobook is narrated by a synthetic, computer-generated voice ({voice_name(project)}), "
            "not by a human narrator.")
    consent = _voice_consent(project.settings().voice_id)
    return f"{said} The voice was made from a recording, with consent: {consent}" if consent else said


@dataclass(frozen=True)
class Credits:
    """The credits' wording; one paragraph per line, each spoken with a paragraph pause."""

    opening: str
    closing: str


def default_credits(project: Project, *, narrator: str, author: str, title: str, producer: str = "",
                    rights: str = "", recording_year: str = "") -> Credits:
    """The wording stores ask for (ACX's opening/closing credit guidelines), from the book's metadata;
    the copyright lines say what the book's own rights say (:mod:`studio.delivery.rights`): never a
    copyright for an author the book does not name. ``rights`` overrides what the book says;
    ``recording_year`` (empty: this year) dates the recording's copyright."""
    meta = project.book().metadata
    subtitle = meta.get("subtitle", "")
    spoken_narrator = f"a synthetic voice, {voice_name(project)}" if narrator == default_narrator(project) else narrator
    by = f", written by {author}" if author else ""
    opening = [f"{title}." + (f" {subtitle}." if subtitle else ""), f"Written by {author}." if author else "",
               f"Narrated by {spoken_narrator}."]
    voices = cast_voices(project, spoken=True)
    cast = ("With the voices of " + _spoken_list([f"{name}, voiced by {voice}" for name, voice in voices]) + "."
            if voices else "")
    closing = ["The end.", f"You have been listening to {title}{by}, narrated by {spoken_narrator}.", cast,
               *copyright_for(project, rights=rights, producer=producer, year=recording_year or None),
               disclosure(project)]
    return Credits("\n".join(p for p in opening if p), "\n".join(p for p in closing if p))


def cast_voices(project: Project, *, spoken: bool = False) -> tuple[tuple[str, str], ...]:
    """The cast as the manifest names it: each voiced character and who voices it ("Joe
    (pitch +3)": a performance of the narrator's voice), or as the credits say it
    (``spoken``: "Joe, higher"); () while casting is off."""
    if not project.cast.enabled():
        return ()
    out = []
    for member in project.cast.members():
        casting = member.casting
        if casting.neutral:
            continue
        who = _voice_called(casting.voice_id) if casting.voice_id else voice_name(project)
        perf = _spoken_performance(casting.performance) if spoken else casting.performance.words()
        out.append((member.name, (f"{who}, {perf}" if spoken else f"{who} ({perf})") if perf else who))
    return tuple(out)


def _spoken_performance(perf) -> str:  # perf: studio.project.cast.Performance
    words = ["higher" if perf.pitch > 0 else "lower" if perf.pitch < 0 else "",
             "faster" if perf.pace > 1 else "slower" if perf.pace < 1 else ""]
    return " and ".join(w for w in words if w)


def licence_warnings(project: Project) -> list[str]:
    """One warning per voice the book is read with whose weights' licence forbids selling what
    they make (XTTS v2's Coqui Public Model License): said in the export report and manifest."""
    from studio.engine.voice.catalog import get_voice

    settings = project.settings()
    cast = [m.casting.voice_id for m in project.cast.members() if m.casting.voice_id] if project.cast.enabled() else []
    out = []
    for voice_id in dict.fromkeys([settings.voice_id, *settings.language_voices.values(), *cast]):
        try:
            terms = get_voice(voice_id).not_for_sale
        except StudioError:
            continue
        if terms:
            out.append(f"the voice {voice_id} is under the {terms}: a book read with it cannot be sold")
    return out


def _voice_consent(voice_id: str) -> str:
    from studio.engine.voice.catalog import get_voice

    try:
        return get_voice(voice_id).consent
    except StudioError:
        return ""


def _voice_called(voice_id: str) -> str:
    from studio.engine.voice.catalog import get_voice

    try:
        name = get_voice(voice_id).name or voice_id
    except StudioError:
        name = voice_id
    return name.split(" (", 1)[0].strip() or name


def _spoken_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else "; ".join(items[:-1]) + "; and " + items[-1]


def credits_paragraphs(text: str) -> list[list[str]]:
    """The credits' text as paragraphs of sentences (a line or a blank line ends a paragraph)."""
    paras = [p for line in text.splitlines() for p in split_paragraphs(line)]
    return [s for s in ([x.text for x in split_sentences(normalize_text(p)) if x.text.strip()] for p in paras) if s]


def credits_clips(project: Project, text: str, engine: Engine | None) -> list[list[Clip]]:
    """The credits' audio, paragraph by paragraph, spoken with the project's voice.

    Sentences already in the cache are read (verified); the rest go through the
    render path's synthesizer with ``engine`` (None: the project's engine is built
    and loaded here, once, only when something is missing).
    """
    from studio.rendering.synthesizer import SynthRequest, each_synthesizer

    paras = credits_paragraphs(text)
    if not paras:
        raise ProjectError("the credits are empty; write their text or export with --no-credits")
    flat = [s for para in paras for s in para]
    said_as = iter(text_renditions(project, flat, project.book_language()))
    keyed = [[(s, next(said_as)) for s in para] for para in paras]
    missing = {r.key: r for para in keyed for _s, r in para if _load(project, r.key) is None}
    if missing:
        owned = engine is None
        try:
            eng = engine or _project_engine(project)
        except StudioError as err:
            raise StudioError(f"the credits cannot be spoken: {err} (leave them out with --no-credits)") from err
        try:
            eng.load()
            synth = each_synthesizer(eng, project.settings().synthesis)
            items = list(missing.values())
            results = synth([SynthRequest(0, r.spoken, r.said, r.lexicon) for r in items])
            for r, audio in zip(items, results):
                if isinstance(audio, BaseException):
                    raise ProjectError(f"the credits sentence '{r.text}' could not be spoken: {audio}")
                record_entry(project.db, project.cache.store(r.key, audio, eng.sample_rate))
            log.info("spoke %d credits sentence(s) with the project's voice", len(items))
        finally:
            if owned:
                eng.close()
    out: list[list[Clip]] = []
    for para in keyed:
        clips = []
        for s, r in para:
            found = _load(project, r.key)
            if found is None:
                raise ProjectError("the credits' audio in the cache is missing or corrupt; export again to speak it")
            clips.append(Clip(found[0], found[1], s))
        out.append(clips)
    return out


def _load(project: Project, key: str):  # -> tuple[np.ndarray, int] | None
    entry = project.cache_entry(key)
    if entry is None:
        return None
    audio = project.cache.load(entry)
    return None if audio is None else (audio, entry.sample_rate)


def _project_engine(project: Project) -> Engine:
    from studio.stack.build import build_engine, plan_for_project

    return build_engine(plan_for_project(project.settings()))


def first_prose_chapter(project: Project, chapters: Sequence[int]) -> int:
    """The default sample chapter: the first exported chapter that is not front matter and says something."""
    infos = project.chapters()
    for idx in chapters:
        if not infos[idx].front_matter and any(not r.is_title for r in project.sentences([idx])):
            return idx
    if not chapters:
        raise ProjectError("there is no chapter to take a retail sample from")
    return chapters[0]


def sample_rows(project: Project, chapter: int, seconds: float) -> tuple[list[SentenceRow], float]:
    """Whole paragraphs from the start of ``chapter``'s prose (its title and a heading
    paragraph left out) up to ``seconds`` of speech, never over :data:`SAMPLE_MAX_S`;
    returns the rows and their spoken length (pauses included)."""
    if not SAMPLE_MIN_S <= seconds <= SAMPLE_MAX_S:
        raise StudioError(f"a retail sample is 1 to 5 minutes long, not {seconds:g} s")
    infos = project.chapters()
    if not 0 <= chapter < len(infos):
        raise ProjectError(f"chapter {chapter + 1} does not exist (the book has {len(infos)})")
    rows = project.sentences([chapter])
    heading = spoken_heading(rows, infos[chapter].title)
    pauses = project.settings().pauses
    paragraphs: dict[int, list[SentenceRow]] = {}
    for r in rows:
        if r.paragraph is not None and not (heading and r.paragraph == 0):
            paragraphs.setdefault(int(r.paragraph), []).append(r)
    chosen: list[SentenceRow] = []
    length = 0.0
    for para in paragraphs.values():
        spoken = [r for r in para if (r.duration or 0) > 0]
        size = sum(r.duration or 0.0 for r in spoken) + pauses.sentence * max(0, len(spoken) - 1) + pauses.paragraph
        if chosen and length + size > min(SAMPLE_MAX_S, seconds + 60.0):
            break
        chosen += para
        length += size
        if length >= seconds:
            break
    if not chosen:
        raise ProjectError(f"chapter {chapter + 1} has no prose for a retail sample")
    return chosen, length


__all__ = ["Credits", "SAMPLE_DEFAULT_S", "SAMPLE_MAX_S", "SAMPLE_MIN_S", "credits_clips", "credits_paragraphs",
           "default_credits", "default_narrator", "disclosure", "first_prose_chapter", "sample_rows", "voice_name"]
