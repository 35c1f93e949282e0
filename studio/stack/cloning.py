"""A voice from a recording, the one way the command line and the desktop make one.

Why here: the clip is checked and prepared by the audio layer
(:mod:`studio.audio.reference_clip`) and the voice made by its family
(:mod:`studio.engine.voice.cloning`); both layers sit below this one, which joins them.
"""

from __future__ import annotations

from pathlib import Path

from studio.audio.reference_clip import ReferenceClip


def voice_from_recording(model_id: str, name: str, recording: Path, consent: str,
                         voices_dir: Path | None = None) -> tuple[Path, ReferenceClip]:
    """Voice ``name`` taken with model ``model_id`` from ``recording``: its folder and the clip as kept."""
    from studio.audio.reference_clip import prepare_reference
    from studio.engine.voice.catalog import default_voices_dir, get_voice
    from studio.engine.voice.cloning import clone_voice, reference_rate

    base = get_voice(model_id)
    clip = prepare_reference(recording, reference_rate(base))
    folder = clone_voice(base, name, clip.audio, clip.rate, consent, clip.source, voices_dir or default_voices_dir())
    return folder, clip


def cloning_offer() -> str:
    """The model to fetch when none installed can take a voice from a recording (its family names it;
    fetched as the library fetches any model: its licence read first, a non-commercial one agreed to);
    "" when no family clones."""
    from studio.engine.families import families

    return next((f.cloning_model for f in families() if f.cloning_model), "")


def cloning_models() -> list[str]:
    """The installed voices a voice can be taken with (their abilities say ``cloning``)."""
    from studio.engine.voice.catalog import list_voices

    return [v.id for v in list_voices() if v.abilities.cloning and not v.consent]
