"""A recording to take a voice from: checked, trimmed and resampled before a model sees it.

Why checks before cloning: a model clones whatever it is given, the room, the hiss,
the clipping and the music included, and a bad clip makes every sentence of a book bad.
So a clip is refused, with a reason a person can act on, when it is too short (the
model hears too little of the voice), hours long (not a reference clip: a chapter
or a whole recording was picked), clipped, mostly silence, or too quiet. Music is
not detected (nothing here tells a sung note from a held vowel reliably): the
command's help asks for speech alone.

What passes is trimmed of its silent edges, cut to :data:`KEEP_S` (what XTTS
conditions on), mixed to mono and resampled to the model's input rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.audio.ffmpeg import stream_info
from studio.audio.measure import db, quiet_edges, read_audio, window_rms
from studio.audio.resample import resample
from studio.core.errors import StudioError

#: shortest speech after trimming: below it a speaker embedding is mostly the room
MIN_SPEECH_S = 6.0
#: longest file accepted: a reference clip is seconds, not a chapter
MAX_FILE_S = 10 * 60.0
#: what is kept after trimming (XTTS conditions on up to 30 s)
KEEP_S = 30.0
#: share of samples at full scale above which a clip counts as clipped
MAX_CLIPPED = 0.001
#: share of 50 ms windows that must hold sound (louder than 40 dB under the clip's loudest)
MIN_VOICED = 0.5
#: quieter than this (RMS of the sounding part, dBFS) is too quiet to take a voice from
MIN_LOUDNESS_DB = -40.0


@dataclass(frozen=True)
class ReferenceClip:
    """A clip ready for a model: mono float32 at ``rate``, with what was measured."""

    audio: np.ndarray
    rate: int
    source: Path
    #: seconds of the file, and of the speech kept
    file_s: float
    kept_s: float
    loudness_db: float
    peak_db: float


def prepare_reference(path: str | Path, rate: int) -> ReferenceClip:
    """The recording at ``path`` checked and prepared for a model at ``rate`` Hz; StudioError says why not."""
    source = Path(path)
    if not source.is_file():
        raise StudioError(f"{source}: no such recording")
    length = stream_info(source).duration
    if length > MAX_FILE_S:
        raise StudioError(f"{source.name} is {length / 60:.0f} minutes long; a voice is taken from 6 to 30 seconds "
                          "of one person speaking (cut a clip from it)")
    audio, src_rate = read_audio(source)
    if audio.size == 0:
        raise StudioError(f"{source.name} holds no audio")
    peak = float(np.max(np.abs(audio)))
    clipped = float(np.mean(np.abs(audio) >= 0.999))
    if clipped > MAX_CLIPPED:
        raise StudioError(f"{source.name} is clipped ({clipped:.1%} of its samples at full scale): record it "
                          "again with the level lower")
    loudest = db(float(window_rms(audio, max(1, int(0.05 * src_rate))).max(initial=0.0)))
    if loudest < MIN_LOUDNESS_DB:
        raise StudioError(f"{source.name} is too quiet (its loudest moment is {loudest:.0f} dBFS; speech needs at "
                          f"least {MIN_LOUDNESS_DB:.0f}): record it closer to the microphone")
    head, tail = quiet_edges(audio, src_rate)
    start, stop = int(head * src_rate), audio.size - int(tail * src_rate)
    speech = audio[start:stop] if stop > start else audio[:0]
    windows = window_rms(speech, max(1, int(0.05 * src_rate)))
    loud = windows > (windows.max() * 10 ** (-40 / 20) if windows.size else 0)
    voiced = float(np.mean(loud)) if windows.size else 0.0
    if speech.size / src_rate < MIN_SPEECH_S or voiced * speech.size / src_rate < MIN_SPEECH_S * MIN_VOICED:
        raise StudioError(f"{source.name} has {voiced * speech.size / src_rate:.1f} s of sound; a voice needs at "
                          f"least {MIN_SPEECH_S:.0f} s of one person speaking")
    if voiced < MIN_VOICED:
        raise StudioError(f"{source.name} is mostly silence ({1 - voiced:.0%} of it after trimming); "
                          "record the speaker without long pauses")
    loudness = db(float(np.sqrt(np.mean(np.square(windows[loud], dtype=np.float64)))))
    if loudness < MIN_LOUDNESS_DB:
        raise StudioError(f"{source.name} is too quiet ({loudness:.0f} dBFS where the speaker talks; at least "
                          f"{MIN_LOUDNESS_DB:.0f}): record it closer to the microphone")
    kept = speech[: int(KEEP_S * src_rate)]
    out = resample(kept, src_rate, rate) if src_rate != rate else kept
    return ReferenceClip(np.asarray(out, np.float32), rate, source, float(length), out.size / rate, loudness,
                         db(peak))
