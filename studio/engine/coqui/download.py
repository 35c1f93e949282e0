"""Coqui models by name (``tts_models/en/ljspeech/tacotron2-DDC``), with the vocoder they need.

Why the studio's own downloader and not coqui's ``ModelManager``: a producer needs the
licence before the bytes (XTTS v2's is non-commercial), progress, a check that what
arrived is whole, a download that resumes where a dropped connection left it, and a
spectrogram model that arrives with its vocoder. The model list is coqui-tts's own
(``TTS/.models.json``, read without importing coqui); ``models`` replaces it (a mirror,
the tests' local server).

Layout: the model lands where coqui-tts puts downloads (:func:`studio.engine.coqui.voices.coqui_models_dir`), as
``tts_models--en--ljspeech--tacotron2-DDC/``, and its vocoder inside it as ``vocoder/``,
where the Coqui engine looks first. ``download.json`` records each file's size and SHA-256.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from studio.core.errors import VoiceError
from studio.engine.family import Progress
from studio.engine.voice.download import fetch_resumable

#: licences that forbid selling what the model makes
NON_COMMERCIAL = {"cpml": "Coqui Public Model License: non-commercial use only",
                  "cc by-nc-nd 4.0": "CC BY-NC-ND 4.0: non-commercial use only"}


def non_commercial(licence: str) -> str | None:
    """What a non-commercial licence is called, said plainly (None: not one of those)."""
    return NON_COMMERCIAL.get(licence.strip().lower())


@dataclass(frozen=True)
class ModelCard:
    name: str
    licence: str
    urls: tuple[str, ...]
    vocoder: str | None
    agreement: bool

    @property
    def licence_line(self) -> str:
        """What to tell a producer before downloading."""
        said = non_commercial(self.licence)
        return f"licence of {self.name}: {said or self.licence or 'not stated'}" + (
            " (a book read with it cannot be sold)" if said else "")


def model_card(name: str, models: Mapping[str, Any] | None = None) -> ModelCard:
    """The card of ``type/language/dataset/model`` in the model list; VoiceError if unknown."""
    if models is None:
        from studio.engine.coqui.checkpoint import model_cards

        models = model_cards()
    parts = name.split("/")
    card: Any = models
    for part in parts:
        card = card.get(part) if isinstance(card, Mapping) else None
    if len(parts) != 4 or not isinstance(card, Mapping):
        raise VoiceError(f"unknown Coqui model {name!r} (expected type/language/dataset/model from coqui's list)")
    if card.get("hf_url"):
        urls = tuple(card["hf_url"]) if isinstance(card["hf_url"], list) else (str(card["hf_url"]),)
    elif card.get("github_rls_url"):
        urls = (str(card["github_rls_url"]),)
    elif card.get("repo_id"):
        files = ("config.json", "model.pth", "vocab.json", "speakers_xtts.pth")
        urls = tuple(f"https://huggingface.co/{card['repo_id']}/resolve/main/{f}" for f in files)
    else:
        raise VoiceError(f"{name}: the model list gives no address to download it from")
    return ModelCard(name, str(card.get("license") or ""), urls, card.get("default_vocoder") or None,
                     bool(card.get("tos_required")))


def download_coqui_voice(name: str, dest_root: Path, *, models: Mapping[str, Any] | None = None,
                         agree: bool = False, timeout: float = 30.0, progress: Progress | None = None,
                         force: bool = False) -> Path:
    """Download model ``name`` (and its vocoder) into ``dest_root``; the model's folder."""
    card = model_card(name, models)
    if card.agreement and not agree:
        raise VoiceError(f"{card.licence_line}; downloading it means accepting that licence (--agree)")
    folder = dest_root / name.replace("/", "--")
    if (folder / "config.json").is_file() and not force:
        return folder
    work = folder.with_name(f".{folder.name}.partial")  # never listed: a folder with a config is whole
    _fetch_model(card, work, timeout, progress)
    if card.vocoder:
        _fetch_model(model_card(card.vocoder, models), work / "vocoder", timeout, progress)
    if folder.exists():
        shutil.rmtree(folder)
    work.rename(folder)
    return folder


def _fetch_model(card: ModelCard, work: Path, timeout: float, progress: Progress | None) -> None:
    """The card's files into ``work`` (a zip unpacked); what arrived whole is kept for the next try."""
    work.mkdir(parents=True, exist_ok=True)
    record_path = work / "download.json"
    record: dict[str, Any] = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() else {}
    files = record.setdefault("files", {})
    record.update(model=card.name, licence=card.licence)
    for url in card.urls:
        target = work / url.rsplit("/", 1)[-1].split("?")[0]
        if target.name in files:
            continue
        size, digest = fetch_resumable(url, target, timeout, progress)
        if target.suffix == ".zip":
            _unzip(target, work)
            target.unlink()
        files[target.name] = {"size": size, "sha256": digest, "url": url}
        record_path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    if not (work / "config.json").is_file():
        raise VoiceError(f"{card.name}: the download holds no config.json")


def _unzip(archive: Path, into: Path) -> None:
    """Unpack a coqui release zip, flattening its one top-level folder as coqui's manager does."""
    try:
        with zipfile.ZipFile(archive) as z:
            for member in z.infolist():
                if member.is_dir():
                    continue
                name = Path(member.filename).name
                if not name or name.startswith("."):
                    continue
                with z.open(member) as src, (into / name).open("wb") as dst:
                    shutil.copyfileobj(src, dst)
    except zipfile.BadZipFile as exc:
        raise VoiceError(f"{archive.name} is not a whole zip archive ({exc})") from exc
