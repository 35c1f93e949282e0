"""Rendering a cast sentence: its parts spoken by their voices, batched by voice, joined.

Why apart from the plain loop in :mod:`studio.rendering.render`: a sentence such as
"'Halloa,' says I, 'what's the matter now?'" is three pieces of audio from up to
three voices; the parts of every sentence in a chunk are grouped by voice, speaker
and settings so each engine is called with whole batches (the render loop's
synthesizer, so a desktop that watches it sees these calls too), then each part
gets its performance (:func:`studio.audio.performance.perform`) and the parts of a
sentence are joined (:func:`studio.audio.performance.join_parts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from studio.audio.performance import join_parts, perform
from studio.audio.resample import resample
from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, SynthesisSettings
from studio.project.cast import Casting
from studio.project.records import SentenceRow
from studio.text.segment import is_speakable


@dataclass(frozen=True)
class PartJob:
    """One part of one sentence as an engine call needs it."""

    row: int  # index of the sentence in the chunk
    printed: str
    spoken: str
    language: str
    lexicon: Lexicon
    voice_id: str
    settings: SynthesisSettings
    pitch: float = 0.0
    pace: float = 1.0


@dataclass(frozen=True)
class SpokenPart:
    """Where one part of a joined cast sentence lies in its audio, and what and in which
    language it was said (what proof-listening hears it in)."""

    start: int  # samples
    end: int
    language: str
    printed: str
    spoken: str


@dataclass(frozen=True)
class SpokenSentence:
    """A cast sentence's joined audio and its parts."""

    audio: np.ndarray
    parts: tuple[SpokenPart, ...]


def part_jobs(index: int, row: SentenceRow, narrator_voice: str, base: SynthesisSettings) -> list[PartJob]:
    """A cast sentence's parts: the narrator's with the sentence's own settings, a
    character's with its voice, speaker and expressiveness (pitch and pace come after),
    each in the language its rendition says it in (a character's voice of another
    language speaks its part in that language)."""
    jobs = []
    for part, words in zip(row.cast, row.parts):  # the words as the sentence's rendition made them
        printed, spoken, language, used = words.printed, words.spoken, words.language, words.lexicon
        if not is_speakable(printed):
            continue
        casting = part.casting
        if casting is None:
            jobs.append(PartJob(index, printed, spoken, language, used, narrator_voice, base))
            continue
        perf = casting.performance
        jobs.append(PartJob(index, printed, spoken, language, used,
                            casting.voice_id or narrator_voice, cast_settings(base, casting), perf.pitch, perf.pace))
    return jobs


def cast_settings(base: SynthesisSettings, casting: Casting) -> SynthesisSettings:
    """A character's synthesis settings: its speaker, and its expressiveness as the noise scales
    (pitch and pace are applied to the audio afterwards, :func:`studio.audio.performance.perform`)."""
    perf = casting.performance
    return replace(base, speaker_id=casting.speaker, noise_scale=round(base.noise_scale * perf.expressive, 4),
                   noise_w=round(base.noise_w * perf.expressive, 4))


def speak_parts(rows: Sequence[SentenceRow], narrator_voice: str, base: Callable[[SentenceRow], SynthesisSettings],
                engine_for: Callable[[str], Engine | None], synthesize: Callable[[Engine, SynthesisSettings, list],
                                                                                 list],
                rate: int, batch_size: int = 8) -> list[SpokenSentence | Exception]:
    """Every sentence's audio at ``rate`` with its parts (or the exception one of its parts raised).

    ``synthesize(engine, settings, jobs)`` speaks a batch of parts with one voice and
    settings (the render loop's synthesizer), at most ``batch_size`` at a time (the
    engine plan's batch); ``engine_for`` None means no engine.
    """
    jobs = [j for i, row in enumerate(rows) for j in part_jobs(i, row, narrator_voice, base(row))]
    audio: dict[int, np.ndarray | Exception] = {}
    groups: dict[tuple[str, SynthesisSettings], list[int]] = {}
    for n, job in enumerate(jobs):
        groups.setdefault((job.voice_id, job.settings), []).append(n)
    for (voice_id, settings), members in groups.items():
        engine = engine_for(voice_id)
        if engine is None:
            for n in members:
                audio[n] = RuntimeError(f"no engine available for voice {voice_id}")
            continue
        results = [r for i in range(0, len(members), max(1, batch_size))
                   for r in synthesize(engine, settings, [jobs[n] for n in members[i:i + max(1, batch_size)]])]
        for n, result in zip(members, results):
            if not isinstance(result, BaseException):
                result = np.asarray(result, np.float32).reshape(-1)
                if engine.sample_rate != rate:
                    result = resample(result, engine.sample_rate, rate)
                result = perform(result, rate, pitch=jobs[n].pitch, pace=jobs[n].pace)
            audio[n] = result
    out: list[SpokenSentence | Exception] = []
    for i in range(len(rows)):
        mine = [n for n, job in enumerate(jobs) if job.row == i]
        failed = next((audio[n] for n in mine if isinstance(audio[n], BaseException)), None)
        if failed is not None:
            out.append(failed)  # type: ignore[arg-type] - an exception
        elif not mine:
            out.append(SpokenSentence(np.zeros(0, np.float32), ()))
        else:
            bounds: list[tuple[int, int]] = []
            clips = [audio[n] for n in mine]
            joined = join_parts(clips, [jobs[n].printed for n in mine], rate, bounds)  # type: ignore[arg-type]
            out.append(SpokenSentence(joined, tuple(SpokenPart(a, b, jobs[n].language, jobs[n].printed,
                                                               jobs[n].spoken) for n, (a, b) in zip(mine, bounds))))
    return out
