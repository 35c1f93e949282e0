"""Which preset is fastest *here* for a voice family, from a short measured run, and the rule
that makes it the default.

Why measured per machine: a build that is faster on one CPU kind can be slower on another
(Kokoro's float-convolution build: faster than its INT8 model on an AVX-512 Xeon, slower on
an AVX2 EPYC; docs/kokoro.md). So no preset becomes a voice's default on the
strength of a figure from another machine: :mod:`studio.measure.preset_trial` renders a few
sentences with every CPU preset of a family, and the result is kept here, in the studio's
cache, under the CPU model, its flags and the versions of the packages that run the presets.
Another CPU or an upgraded ONNX Runtime finds no result and measures again.

The rule (:func:`fastest`): among the presets within the family's quality bound (the voice's
``abilities.quality_bound``: the lowest log-mel correlation with the reference preset's audio,
sentence by sentence), the one with the least CPU time per second of audio. A preset outside
the bound is never chosen, however fast; the reference (the family's first preset) always
qualifies. Without a measurement here the default is the family's reference (Kokoro: its
model as published, not the build that was faster on an AVX-512 CPU).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from studio.core import paths
from studio.core.files import write_atomic

if TYPE_CHECKING:
    from studio.engine.presets import Preset
    from studio.engine.voice.info import VoiceInfo

log = logging.getLogger(__name__)

#: bumped when what a trial measures changes, so older results are measured again
#: (2: Kokoro's int8-cpu runs signed-weight integer products on VNNI CPUs, about 1.5x faster)
TRIAL_VERSION = 2
#: where trials are kept instead of the cache's ``preset-speed`` folder (the tests set it)
TRIALS_ENV = "STUDIO_PRESET_TRIALS"
#: packages whose version changes what a preset costs
PACKAGES = ("onnxruntime", "numpy", "torch")


@dataclass(frozen=True)
class PresetTrial:
    """One preset's figures in a trial: CPU seconds per second of audio (one thread, the same
    sentences for every preset) and the lowest log-mel correlation of its audio with the
    reference preset's; ``error`` says why a preset has no figures."""

    preset: str
    cpu_per_audio_s: float | None = None
    quality: float | None = None
    error: str = ""


@dataclass(frozen=True)
class FamilyTrial:
    """A trial of one voice family's presets on this machine."""

    group: str  # the voices' abilities.speed_group
    voice_id: str  # the voice it was measured with
    reference: str  # the family's first preset: the quality reference
    bound: float  # the family's quality bound when measured
    machine: str  # :func:`machine_key`
    measured_at: str
    sentences: int
    trials: tuple[PresetTrial, ...]


@dataclass(frozen=True)
class Choice:
    """The preset the rule picks, and how much less CPU it needs than the reference."""

    preset: str
    speedup: float  # reference's CPU per audio second / the chosen one's (1.0: the reference)
    why: str


@lru_cache(maxsize=1)
def machine_key() -> str:
    """What makes two trials comparable: CPU model, its flags that matter, package versions."""
    import importlib.metadata

    from studio.core.system import cpu_model
    from studio.engine.cpu_features import notable_flags

    cpu = cpu_model()
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name}=-")
    return f"{cpu} | {' '.join(notable_flags())} | {' '.join(versions)} | trial={TRIAL_VERSION}"


def trial_path(group: str, machine: str | None = None) -> Path:
    """``<cache>/preset-speed/<group>-<machine hash>.json`` (``$STUDIO_PRESET_TRIALS`` moves the folder)."""
    key = hashlib.sha256((machine or machine_key()).encode()).hexdigest()[:16]
    folder = os.environ.get(TRIALS_ENV)
    return (Path(folder) if folder else paths.cache_dir() / "preset-speed") / f"{group}-{key}.json"


def save_trial(trial: FamilyTrial) -> Path:
    path = trial_path(trial.group, trial.machine)
    write_atomic(path, json.dumps(asdict(trial), indent=1))
    return path


def load_trial(group: str) -> FamilyTrial | None:
    """The trial of ``group`` measured on this machine with these packages, if any."""
    if not group:
        return None
    machine = machine_key()
    try:
        data = json.loads(trial_path(group, machine).read_text(encoding="utf-8"))
        trial = FamilyTrial(**{**data, "trials": tuple(PresetTrial(**t) for t in data["trials"])})
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return trial if trial.machine == machine and trial.group == group else None


def fastest(trials: Sequence[PresetTrial], reference: str, bound: float) -> Choice:
    """The fastest preset within ``bound`` (see the module notes); the reference without figures."""
    ref = next((t for t in trials if t.preset == reference), None)
    qualified = [t for t in trials if t.cpu_per_audio_s and not t.error
                 and (t.preset == reference or (bound > 0 and t.quality is not None and t.quality >= bound))]
    if not qualified:
        return Choice(reference, 1.0, "not measured on this computer: the family's reference preset")
    best = min(qualified, key=lambda t: t.cpu_per_audio_s or 0.0)
    base = ref.cpu_per_audio_s if ref is not None and ref.cpu_per_audio_s else best.cpu_per_audio_s
    speedup = (base or 1.0) / (best.cpu_per_audio_s or 1.0)
    left_out = [t.preset for t in trials if t.cpu_per_audio_s and t not in qualified]
    why = (f"measured fastest on this computer within the quality bound: {speedup:.2f}x "
           f"{reference}'s speed" if best.preset != reference else "measured fastest on this computer")
    if left_out:
        why += f" ({', '.join(left_out)} left out: outside the quality bound)"
    return Choice(best.preset, speedup, why)


def measured_choice(voice: "VoiceInfo") -> Choice | None:
    """The rule applied to this machine's trial of the voice's family (None: not measured here)."""
    abilities = voice.abilities
    trial = load_trial(abilities.speed_group)
    if trial is None:
        return None
    choice = fastest(trial.trials, trial.reference, abilities.quality_bound)
    return choice if choice.preset in abilities.presets else None


def default_preset(voice: "VoiceInfo", backend: str | None = None) -> "Preset":
    """The preset a voice gets when nobody chose one: the measured choice here (unless another
    backend was asked for), else :func:`~studio.engine.presets.preset_for_voice`. Used where a
    preset is *named* (a new project, a render's early start), never to reinterpret a project
    that already renders without one (its cached audio would no longer match)."""
    from studio.engine.presets import availability, get_preset, preset_for_voice

    choice = measured_choice(voice)
    if choice is not None and (backend is None or get_preset(choice.preset).backend == backend):
        return get_preset(choice.preset)
    first = voice.abilities.presets[0] if voice.abilities.speed_group and voice.abilities.presets else None
    if first and (backend is None or get_preset(first).backend == backend) and availability(first).ok:
        return get_preset(first)  # the family's reference: no build tuned for another CPU kind
    return preset_for_voice(voice, backend)


def now() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
