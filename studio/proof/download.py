"""A bigger speech model on request: the usual faster-whisper names, downloaded once into the cache.

Why our own download code rather than the hub client: the studio must say what it
is fetching and how far it got (a large model is 1.5 GB), must never load a file
that arrived damaged or half-written (each file's size and SHA-256 as the hub lists
them are checked before it is moved into place), and must work the same against a
mirror (``STUDIO_MODEL_HUB``, also how the tests serve a fake model from a local
HTTP server). Only :mod:`studio.proof.model` calls it, when ``--asr-model`` names a
model that is not a folder and not yet in the cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from studio.core.errors import StudioError

log = logging.getLogger(__name__)

HUB = "https://huggingface.co"
#: faster-whisper's names for the CTranslate2 conversions (as ``faster_whisper.utils``)
MODELS = {
    "tiny.en": "Systran/faster-whisper-tiny.en", "tiny": "Systran/faster-whisper-tiny",
    "base.en": "Systran/faster-whisper-base.en", "base": "Systran/faster-whisper-base",
    "small.en": "Systran/faster-whisper-small.en", "small": "Systran/faster-whisper-small",
    "medium.en": "Systran/faster-whisper-medium.en", "medium": "Systran/faster-whisper-medium",
    "large-v1": "Systran/faster-whisper-large-v1", "large-v2": "Systran/faster-whisper-large-v2",
    "large-v3": "Systran/faster-whisper-large-v3", "large": "Systran/faster-whisper-large-v3",
    "distil-large-v2": "Systran/faster-distil-whisper-large-v2",
    "distil-medium.en": "Systran/faster-distil-whisper-medium.en",
    "distil-small.en": "Systran/faster-distil-whisper-small.en",
    "distil-large-v3": "Systran/faster-distil-whisper-large-v3",
    "large-v3-turbo": "mobiuslabsgmbh/faster-whisper-large-v3-turbo",
    "turbo": "mobiuslabsgmbh/faster-whisper-large-v3-turbo",
}
#: the files a faster-whisper folder needs (the vocabulary comes as .txt or .json)
WANTED = ("model.bin", "config.json", "tokenizer.json", "vocabulary.txt", "vocabulary.json",
          "preprocessor_config.json")
DONE = ".complete"


class DownloadError(StudioError):
    """The model could not be fetched or did not arrive whole: one line that says which and why."""


@dataclass(frozen=True)
class Progress:
    """How far a download got (a frozen value: it may cross to the GUI thread)."""

    name: str
    file: str
    done: int
    total: int


def hub() -> str:
    return os.environ.get("STUDIO_MODEL_HUB", HUB).rstrip("/")


def _open(url: str):  # -> http.client.HTTPResponse
    try:
        return urllib.request.urlopen(url, timeout=30)  # noqa: S310 - the hub's https or a configured mirror
    except (urllib.error.URLError, OSError) as exc:
        raise DownloadError(f"cannot reach {url} ({exc}); check the connection or set STUDIO_MODEL_HUB") from exc


def _listing(repo: str) -> list[dict]:
    """The repository's files with their size and, for large ones, SHA-256 (the hub's tree API)."""
    with _open(f"{hub()}/api/models/{repo}/tree/main") as resp:
        return [f for f in json.loads(resp.read()) if f.get("type", "file") == "file"]


def fetch_model(name: str, target: Path, progress: Callable[[Progress], None] | None = None) -> Path:
    """``name`` (a faster-whisper model name) downloaded into ``target`` and checked; ``target`` back."""
    repo = MODELS.get(name, name if "/" in name else "")
    if not repo:
        raise DownloadError(f"unknown speech model {name!r}; known: {', '.join(MODELS)} (or a model folder)")
    if (target / DONE).is_file():
        return target
    files = [f for f in _listing(repo) if f["path"] in WANTED]
    if not any(f["path"] == "model.bin" for f in files):
        raise DownloadError(f"{repo} has no model.bin: not a faster-whisper model")
    target.mkdir(parents=True, exist_ok=True)
    for entry in files:
        _fetch_file(name, repo, entry, target, progress)
    (target / DONE).write_text(repo + "\n", encoding="utf-8")
    log.info("speech model %s downloaded into %s", name, target)
    return target


def _fetch_file(name: str, repo: str, entry: dict, target: Path, progress: Callable[[Progress], None] | None) -> None:
    path = entry["path"]
    size = int(entry.get("size") or 0)
    sha = (entry.get("lfs") or {}).get("oid") or entry.get("sha256")
    final = target / path
    if final.is_file() and final.stat().st_size == size and sha is None:
        return
    part = target / f".{path}.part"
    digest = hashlib.sha256()
    done = 0
    with _open(f"{hub()}/{repo}/resolve/main/{path}") as resp, open(part, "wb") as out:
        total = int(resp.headers.get("Content-Length") or size or 0)
        while True:
            block = resp.read(1 << 20)
            if not block:
                break
            out.write(block)
            digest.update(block)
            done += len(block)
            if progress is not None:
                progress(Progress(name, path, done, total))
    if size and done != size:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{path} of {name} arrived incomplete ({done} of {size} bytes); try again")
    if sha and digest.hexdigest() != sha:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{path} of {name} does not match its checksum; try again")
    os.replace(part, final)
