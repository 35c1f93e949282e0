"""A new Coqui voice from a recording: an XTTS checkpoint plus one speaker, computed once.

Why a voice folder of its own: a cloned narrator is chosen, cast and credited like any
voice, so it is one: a folder in the voices folder holding the base model's files (hard
links where the disk allows, else copies), the prepared reference clip, the speaker
latents computed from it here (never per sentence) and ``clone.json`` with the consent
statement of the person recorded, which the credits and the manifest carry (stores ask
for a disclosure of a synthetic voice, and a voice taken from a person needs their say).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import wave
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import VoiceError
from studio.engine.coqui.checkpoint import CLONE_FILE, SPEAKER_FILE, read_checkpoint
from studio.engine.coqui.xtts import VOCAB_FILE, load_xtts, speaker_latents

REFERENCE_FILE = "reference.wav"
#: XTTS's input rate: the reference clip is stored at it
XTTS_INPUT_RATE = 22050


def reference_rate(base: Any) -> int:
    """The sample rate the base model wants its reference clip at."""
    checkpoint = read_checkpoint(Path(base.config_path).parent)
    if checkpoint.model != "xtts":
        raise VoiceError(f"{base.id} is a {checkpoint.label} model; voices are cloned from an XTTS v2 model")
    return int((checkpoint.config.get("model_args") or {}).get("input_sample_rate") or XTTS_INPUT_RATE)


def clone_voice(base: Any, name: str, audio: np.ndarray, rate: int, consent: str, source: Path,
                voices_dir: Path) -> Path:
    """Make voice ``name`` from ``base`` (an XTTS VoiceInfo) and a prepared clip; its folder."""
    checkpoint = read_checkpoint(Path(base.config_path).parent)
    if checkpoint.model != "xtts":
        raise VoiceError(f"{base.id} is a {checkpoint.label} model; voices are cloned from an XTTS v2 model")
    if not consent.strip():
        raise VoiceError("a cloned voice needs the recorded person's consent statement (--consent)")
    dest = voices_dir / name
    if dest.exists():
        raise VoiceError(f"a voice called {name!r} exists already ({dest})")
    work = voices_dir / f".{name}.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        for path in (checkpoint.config_path, checkpoint.checkpoint_path, checkpoint.folder / VOCAB_FILE):
            _link_or_copy(path, work / path.name)
        _write_wav(work / REFERENCE_FILE, audio, rate)
        import torch

        model = load_xtts(read_checkpoint(work), "cpu")
        torch.save(speaker_latents(model, work / REFERENCE_FILE), work / SPEAKER_FILE)
        (work / CLONE_FILE).write_text(json.dumps({
            "name": name, "base": base.id, "consent": " ".join(consent.split()), "recording": source.name,
            "seconds": round(audio.size / rate, 2),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }, indent=2), encoding="utf-8")
        work.rename(dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return dest


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _write_wav(path: Path, audio: np.ndarray, rate: int) -> None:
    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm.tobytes())
