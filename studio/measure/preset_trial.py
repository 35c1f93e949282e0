"""The short run that chooses a voice family's preset on this machine (:mod:`studio.stack.preset_speed`).

What it measures: every CPU preset of the voice that can run here speaks the same few
sentences, in one process, one thread each (so the figure is the preset's cost, not how
busy the other core is: CPU seconds per second of audio), in interleaved rounds after a
warm-up, the median round kept; and each preset's audio against the reference preset's
(log-mel correlation, lowest sentence; noise off, so the same sentence is the same audio).
Two presets, three rounds: about 100 CPU seconds of one core (5 sentences, ~20 s of audio each time);
kept per CPU model and package versions.
"""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Sequence

from studio.engine.base import SynthesisSettings
from studio.engine.presets import availability, get_preset, open_preset
from studio.measure.quality import log_mel_correlation
from studio.stack.preset_speed import FamilyTrial, PresetTrial, machine_key, now, save_trial

if TYPE_CHECKING:
    from studio.engine.voice.info import VoiceInfo

log = logging.getLogger(__name__)

#: prose none of the presets was tuned on, short and long sentences (a book's mix)
SENTENCES = (
    "The lamp had gone out long before the travellers reached the inn.",
    "Nobody answered.",
    "She folded the letter twice, put it in her coat, and walked down to the harbour without looking back.",
    "Was it the wind, or had someone knocked at the door?",
    "By noon the fog had lifted, and the whole valley lay open below them, green and silver in the sun.",
)


def cpu_presets(voice: "VoiceInfo") -> list[str]:
    """The voice's presets a trial can measure here: CPU ones that can run."""
    return [p for p in voice.abilities.presets if get_preset(p).device == "cpu" and availability(p).ok]


def run_trial(voice: "VoiceInfo", *, sentences: Sequence[str] = SENTENCES, rounds: int = 3,
              presets: Sequence[str] | None = None, save: bool = True,
              progress: Callable[[str], None] | None = None) -> FamilyTrial:
    """Measure the voice's CPU presets (see the module notes); saved for this machine unless ``save`` is False."""
    say = progress or (lambda _msg: None)
    names = list(presets or cpu_presets(voice))
    reference = voice.abilities.presets[0] if voice.abilities.presets else names[0]
    if reference in names:  # the reference first: every other preset is scored against it
        names.remove(reference)
        names.insert(0, reference)
    settings = replace(voice.default_settings, noise_scale=0.0, noise_w=0.0)
    engines, ids, errors = {}, {}, {}
    for name in names:
        say(f"loading {name}")
        try:
            engine = open_preset(name, voice, threads=1)
            engine.load()
            ids[name] = [engine.text_to_ids(s, voice.language) for s in sentences]
            engine.synthesize_batch(ids[name][:1], settings)  # warm-up: first-call allocations
            engines[name] = engine
        except Exception as exc:  # a preset that fails here is reported, not chosen
            errors[name] = f"{type(exc).__name__}: {exc}"
            log.warning("preset trial: %s failed to load: %s", name, exc)
    cpu: dict[str, list[float]] = {n: [] for n in engines}
    audio: dict[str, list] = {}
    try:
        for r in range(max(1, rounds)):
            for name, engine in engines.items():
                started = time.process_time()
                out = [engine.synthesize_batch([i], settings)[0] for i in ids[name]]
                seconds = sum(a.size for a in out) / engine.sample_rate
                cpu[name].append((time.process_time() - started) / max(seconds, 1e-6))
                audio.setdefault(name, out)
                say(f"round {r + 1}: {name} {cpu[name][-1]:.3f} CPU s per s of audio")
    finally:
        for engine in engines.values():
            engine.close()
    rate = next(iter(engines.values())).sample_rate if engines else 0
    trials = []
    for name in names:
        if name not in engines:
            trials.append(PresetTrial(name, error=errors.get(name, "not run")))
            continue
        quality = None
        if reference in audio:
            quality = min(log_mel_correlation(a, b, rate) for a, b in zip(audio[reference], audio[name]))
        trials.append(PresetTrial(name, statistics.median(cpu[name]), quality))
    trial = FamilyTrial(voice.abilities.speed_group, voice.id, reference, voice.abilities.quality_bound,
                        machine_key(), now(), len(sentences), tuple(trials))
    if save and voice.abilities.speed_group:
        save_trial(trial)
    return trial
