"""Tiny Coqui checkpoints for the tests, built once per session with coqui-tts's own classes
(``bench/coqui_checkpoints.py``) in a voices folder of their own (no tests in here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: what the session's voices folder holds: voice id -> (architecture, languages, speakers)
COQUI_VOICES = {
    "tinytaco": ("Tacotron 2", ("en",), ()),
    "tinyglow": ("Glow-TTS", ("en",), ()),
    "tinyvits": ("VITS", ("en",), ()),
    "tinyvits-cast": ("VITS", ("en",), ("ann", "bob", "cid")),
    "tinyyourtts": ("VITS", ("en", "fr"), ("ann", "bob")),
}
#: sentences of mixed lengths for Tacotron 2: its test stop token (``stop_below``) ends some
#: after a few frames and lets others run to the decoder's limit
MIXED = ("Hi.", "Hello there, my friend.", "A much longer sentence that goes on and on for a while.", "Yes.",
         "What now?", "The river was quiet today, and the garden too.", "Go.",
         "Candles burn slowly in the window at night.")


@pytest.fixture(scope="session")
def coqui_voices(tmp_path_factory) -> Path:
    """A voices folder with one checkpoint of each architecture (Tacotron 2 with a HiFi-GAN
    saved in its own ``vocoder/`` folder)."""
    import coqui_checkpoints as build

    root = tmp_path_factory.mktemp("coqui-voices")
    build.tacotron2(root / "tinytaco", max_decoder_steps=40, stop_below=0.0025)
    build.hifigan(root / "tinytaco" / "vocoder")
    build.glow_tts(root / "tinyglow")
    build.vits(root / "tinyvits")
    build.vits(root / "tinyvits-cast", speakers=("ann", "bob", "cid"))
    build.vits(root / "tinyyourtts", speakers=("ann", "bob"), languages=("en", "fr-fr"))
    return root


@pytest.fixture
def coqui_env(coqui_voices: Path, tmp_path: Path) -> dict[str, str]:
    """Environment for a ``studio`` subprocess that sees the session's Coqui voices (and an empty
    coqui download cache), with torch on one thread: the machine is shared."""
    return {**os.environ, "STUDIO_VOICES_DIR": str(coqui_voices), "TTS_HOME": str(tmp_path / "tts-home"),
            "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"), "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="session")
def xtts_voices(tmp_path_factory) -> Path:
    """A voices folder with a tiny XTTS (``tinyxtts``) and ``ann``, a voice cloned from it with a
    speech-like recording through the same steps as `studio voices clone`."""
    import coqui_checkpoints as build
    import soundfile

    from studio.audio.reference_clip import prepare_reference
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.cloning import clone_voice, reference_rate

    root = tmp_path_factory.mktemp("xtts-voices")
    build.xtts(root / "tinyxtts")
    recording = root.parent / "ann.wav"
    soundfile.write(recording, build.speech_like(9.0, 44100), 44100)
    base = get_voice("tinyxtts", root, hub_dir=root / "none")
    clip = prepare_reference(recording, reference_rate(base))
    clone_voice(base, "ann", clip.audio, clip.rate, "Ann Lee agrees to this use of her voice, 2026-12-05",
                recording, root)
    return root
