"""Voices and models fetched by name for the desktop's library: Kokoro packs and models,
Coqui models (``tts_models/...``), each by its own family's downloader.

Why here: which downloader a name goes to, and where its files land, is a family's
business; the desktop asks this layer (which may import the engine) for what can be
fetched, the licence to show first, and the fetch itself, and never asks a family.
The downloads are the command line's (:mod:`studio.engine.kokoro.download`,
:mod:`studio.engine.voice.coqui_download`): resumable, checked, the same files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

Progress = Callable[[int, "int | None"], None]

#: Kokoro's English packs (American, then British) and its FP32 model: what the library offers
KOKORO_OFFER = (
    "kokoro:af_heart", "kokoro:af_bella", "kokoro:af_nicole", "kokoro:af_sarah", "kokoro:af_sky",
    "kokoro:am_adam", "kokoro:am_michael", "kokoro:am_fenrir", "kokoro:bf_emma", "kokoro:bf_isabella",
    "kokoro:bm_george", "kokoro:bm_lewis", "kokoro:model-fp32",
)
COQUI_PREFIX = "tts_models/"


@dataclass(frozen=True)
class Offer:
    """Something the library can fetch beyond the Piper catalogue."""

    name: str
    language: str
    kind: str  # what it is, said in the Quality column
    installed: bool


@dataclass(frozen=True)
class LicenceNote:
    """What to tell the producer before a download; ``agreement``: ask before fetching."""

    name: str
    line: str
    agreement: bool


def offers(voices_dir: Path | None = None) -> tuple[Offer, ...]:
    """The Kokoro packs and model, each marked installed when it is here."""
    from studio.engine.kokoro.model import USER_MODELS
    from studio.engine.kokoro.packs import ID_PREFIX, USER_FOLDER, pack_language
    from studio.engine.voice.catalog import default_voices_dir, list_voices

    folder = voices_dir if voices_dir is not None else default_voices_dir()
    have = {v.id for v in list_voices(folder)}
    out = []
    for name in KOKORO_OFFER:
        what = name.removeprefix(ID_PREFIX)
        if what.startswith("model-"):
            precision = what.removeprefix("model-")
            here = (folder / USER_FOLDER / USER_MODELS[precision]).is_file()
            out.append(Offer(name, "", f"Kokoro model {precision.upper()}", here))
        else:
            out.append(Offer(name, pack_language(what), "Kokoro pack", name in have))
    return tuple(out)


def licence(name: str, coqui_models: Mapping[str, Any] | None = None) -> LicenceNote:
    """The licence of ``name`` as a producer must read it before fetching (a Coqui model's card;
    the others' licences are said on their pages: an empty line). VoiceError: no such model."""
    if not name.startswith(COQUI_PREFIX):
        return LicenceNote(name, "", False)
    from studio.engine.voice.coqui_download import model_card, non_commercial

    card = model_card(name, coqui_models)
    return LicenceNote(name, card.licence_line, card.agreement or non_commercial(card.licence) is not None)


def fetch(name: str, *, agree: bool = False, timeout: float = 30.0, progress: Progress | None = None,
          coqui_models: Mapping[str, Any] | None = None, kokoro_url: str | None = None,
          voices_dir: Path | None = None) -> str | None:
    """Download ``name`` (resumable: a second call continues a cut one); the id of the voice it
    gives, None for a model that is no voice of its own. VoiceError says why not."""
    from studio.core.errors import VoiceError
    from studio.engine.kokoro import download as kokoro_download
    from studio.engine.kokoro.packs import ID_PREFIX
    from studio.engine.voice.catalog import coqui_models_dir, coqui_voice_info, default_voices_dir

    if name.startswith(COQUI_PREFIX):
        from studio.engine.voice.coqui_download import download_coqui_voice

        folder = download_coqui_voice(name, coqui_models_dir(), models=coqui_models, agree=agree, timeout=timeout,
                                      progress=progress)
        return coqui_voice_info(folder, source="coqui-hub").id
    if kokoro_download.is_kokoro(name):
        urls = {"packs_url": kokoro_url, "models_url": kokoro_url} if kokoro_url else {}
        kokoro_download.download(name, voices_dir if voices_dir is not None else default_voices_dir(),
                                 timeout=timeout, progress=progress, **urls)
        return None if name.removeprefix(ID_PREFIX).startswith("model-") else name
    raise VoiceError(f"{name!r} is neither a Coqui model (tts_models/...) nor a Kokoro pack (kokoro:af_heart)")
