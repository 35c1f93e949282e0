"""Fetch voices from the internet into the user's voices folder.

Why our own downloader for Piper instead of ``piper.download_voices``: that one
writes straight to the final name (an interrupted download leaves a truncated
model that later "loads" and fails mid-book), has no timeout, and lets network
errors out as tracebacks. Here each file goes to a temporary name in the target
folder, is checked (length, optional digest from a ``voices.json``-style index),
and only then renamed into place, model first and config last, so a voice appears
in :func:`~studio.engine.voice.catalog.list_voices` only once it is complete.

Coqui models (:mod:`studio.engine.coqui.download`) and Kokoro packs
(:mod:`studio.engine.kokoro.download`) are large single files: they come through
:func:`fetch_resumable`, which continues a broken download where it stopped.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import re
import socket
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Mapping

from studio.core.errors import VoiceError
from studio.engine.family import Progress
from studio.engine.voice.config import VoiceConfig
from studio.engine.piper.voices import piper_voice_info
from studio.engine.voice.catalog import default_voices_dir
from studio.engine.voice.info import VoiceInfo

_LOGGER = logging.getLogger(__name__)

#: rhasspy/piper-voices on Hugging Face; files live at
#: ``{base}/{family}/{lang_code}/{speaker}/{quality}/{voice}.onnx[.json]``.
DEFAULT_BASE_URL = "https://huggingface.co/rhasspy/piper-voices/resolve/main"
DEFAULT_TIMEOUT = 30.0
_VOICE_PATTERN = re.compile(
    r"^(?P<family>[a-z]{2,3})_(?P<region>[A-Za-z0-9]+)-(?P<speaker>[^-/\\]+)-(?P<quality>[^-/\\]+)$"
)
_CHUNK = 1 << 16



def piper_voice_files(name: str) -> tuple[str, str]:
    """Relative paths (as in piper-voices' ``voices.json``) of a voice's model and config."""
    match = _VOICE_PATTERN.match(name.strip())
    if not match:
        raise VoiceError(
            f"invalid Piper voice name {name!r}: expected <lang>_<REGION>-<speaker>-<quality>, "
            "e.g. en_US-lessac-medium"
        )
    g = match.groupdict()
    folder = f"{g['family']}/{g['family']}_{g['region']}/{g['speaker']}/{g['quality']}"
    return f"{folder}/{name}.onnx", f"{folder}/{name}.onnx.json"


def download_piper_voice(
    name: str,
    dest_dir: Path | None = None,
    base_url: str = DEFAULT_BASE_URL,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    index: Mapping[str, Any] | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> VoiceInfo:
    """Download ``name`` (e.g. ``en_US-lessac-medium``) into ``dest_dir`` and return it.

    ``index`` is an optional parsed ``voices.json``; when it lists the voice, each
    file's ``size_bytes`` and ``sha256_digest``/``md5_digest`` are enforced. Already
    present voices are not downloaded again unless ``force``.
    """
    name = name.strip()
    model_rel, config_rel = piper_voice_files(name)
    dest_dir = Path(dest_dir) if dest_dir is not None else default_voices_dir()
    model_path = dest_dir / f"{name}.onnx"
    config_path = dest_dir / f"{name}.onnx.json"
    if not force and model_path.is_file() and config_path.is_file():
        try:
            return piper_voice_info(model_path)
        except VoiceError as exc:
            _LOGGER.warning("re-downloading broken voice %s: %s", name, exc)

    try:
        dest_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VoiceError(f"cannot create voices folder {dest_dir}: {exc.strerror or exc}") from exc

    expected = _index_entries(index, name) if index is not None else {}
    base = base_url.rstrip("/")
    temps: list[Path] = []
    try:
        for rel in (model_rel, config_rel):
            temps.append(
                _fetch(f"{base}/{_quote(rel)}", dest_dir, timeout, expected.get(rel, {}), progress)
            )
        # Validate the config before anything takes the final names.
        try:
            VoiceConfig.from_file(temps[1])
        except VoiceError as exc:
            raise VoiceError(f"downloaded config of {name} is unusable: {exc}") from exc
        os.replace(temps[0], model_path)
        os.replace(temps[1], config_path)
        temps.clear()
    except OSError as exc:
        raise VoiceError(f"cannot write voice {name} to {dest_dir}: {exc.strerror or exc}") from exc
    finally:
        for tmp in temps:
            tmp.unlink(missing_ok=True)
    _LOGGER.info("downloaded voice %s to %s", name, dest_dir)
    return piper_voice_info(model_path)


def fetch_voice_index(base_url: str = DEFAULT_BASE_URL, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The piper-voices ``voices.json`` (sizes and checksums of every voice's files).

    Why fetch it before a voice: it is what makes a download verifiable; without it
    only the length the server announces can be checked.
    """
    import json

    url = f"{base_url.rstrip('/')}/voices.json"
    with tempfile.TemporaryDirectory(prefix="studio-index-") as tmp:
        path = _fetch(url, Path(tmp), timeout, {}, None)
        try:
            index = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise VoiceError(f"the voice index {url} is not valid JSON ({_short(exc)})") from exc
    if not isinstance(index, dict):
        raise VoiceError(f"the voice index {url} is not a JSON object")
    return index


def fetch_resumable(url: str, target: Path, timeout: float, progress: Progress | None = None,
                    check: Callable[[Path], object] | None = None) -> tuple[int, str]:
    """``url`` into ``target`` through ``target.part``, continuing a part already there with an
    HTTP range; returns (size, sha256).

    Why resumable: model files are hundreds of megabytes, and a dropped connection should cost
    only what is left. The size the server announces is checked, a server that ignores the
    range starts over, and ``check(part)`` must pass before the rename (a failed check deletes
    the part), so a file under its final name is always whole.
    """
    part = target.with_name(target.name + ".part")
    have = part.stat().st_size if part.is_file() else 0
    headers = {"User-Agent": "studio-voice-downloader", **({"Range": f"bytes={have}-"} if have else {})}
    host = urllib.parse.urlsplit(url).netloc or url
    done, total = 0, None
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as response:
            resumed = have > 0 and response.status == 206
            done = have if resumed else 0
            length = response.headers.get("Content-Length")
            total = done + int(length) if length and length.isdigit() else None
            with part.open("ab" if resumed else "wb") as out:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, total)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # the part is already whole
            total = done = have
        else:
            raise VoiceError(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise VoiceError(f"cannot reach {host}: offline? ({_short(exc.reason)}); run it again to resume") from exc
    except (socket.timeout, TimeoutError, OSError, http.client.HTTPException) as exc:
        raise VoiceError(f"download from {host} interrupted ({type(exc).__name__}); run it again to resume") from exc
    if total is not None and done != total:
        raise VoiceError(f"download of {url} stopped at {done} of {total} bytes; run it again to resume")
    if check is not None:
        try:
            check(part)
        except VoiceError as exc:
            part.unlink(missing_ok=True)
            raise VoiceError(f"download of {url} is not usable, deleted: {exc}") from exc
    digest = hashlib.sha256()
    with part.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    os.replace(part, target)
    _LOGGER.info("downloaded %s to %s", url, target)
    return done, digest.hexdigest()


def _fetch(
    url: str, dest_dir: Path, timeout: float, expected: Mapping[str, Any], progress: Progress | None
) -> Path:
    """Stream ``url`` into a temp file in ``dest_dir``; verify; return the temp path."""
    host = urllib.parse.urlsplit(url).netloc or url
    request = urllib.request.Request(url, headers={"User-Agent": "studio-voice-downloader"})
    fd, tmp_name = tempfile.mkstemp(prefix=".download-", suffix=".part", dir=dest_dir)
    tmp = Path(tmp_name)
    sha256, md5 = hashlib.sha256(), hashlib.md5()
    done = 0
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    header = response.headers.get("Content-Length")
                    total = int(header) if header and header.isdigit() else None
                    while chunk := response.read(_CHUNK):
                        out.write(chunk)
                        sha256.update(chunk)
                        md5.update(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done, total)
            except urllib.error.HTTPError as exc:
                raise VoiceError(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from exc
            except urllib.error.URLError as exc:
                raise VoiceError(f"cannot reach {host}: offline? ({_short(exc.reason)})") from exc
            except (socket.timeout, TimeoutError) as exc:
                raise VoiceError(f"cannot reach {host}: offline? (timed out after {timeout:g} s)") from exc
            except (ConnectionError, http.client.HTTPException) as exc:
                raise VoiceError(f"download from {host} interrupted: {_short(exc)}") from exc
            out.flush()
            os.fsync(out.fileno())
        if total is not None and done != total:
            raise VoiceError(f"download of {url} incomplete: {done} of {total} bytes")
        if done == 0:
            raise VoiceError(f"download of {url} is empty")
        size = expected.get("size_bytes")
        if size is not None and int(size) != done:
            raise VoiceError(f"download of {url} has {done} bytes, index says {size}")
        for key, digest in (("sha256_digest", sha256), ("sha256", sha256), ("md5_digest", md5)):
            want = expected.get(key)
            if want and want.lower() != digest.hexdigest():
                raise VoiceError(f"download of {url} is corrupt ({key.split('_')[0]} mismatch)")
        return tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _index_entries(index: Mapping[str, Any], name: str) -> dict[str, Mapping[str, Any]]:
    entry = index.get(name)
    if not isinstance(entry, Mapping):
        raise VoiceError(f"voice {name!r} is not in the voice index")
    files = entry.get("files") or {}
    return {str(k): v for k, v in files.items() if isinstance(v, Mapping)}


def _quote(rel: str) -> str:
    return urllib.parse.quote(rel, safe="/")


def _cleanup_partial(folder: Path) -> None:
    """Remove a half-downloaded coqui folder so the next try starts clean."""
    import shutil

    if folder.is_dir() and not (folder / "config.json").is_file():
        shutil.rmtree(folder, ignore_errors=True)


def _short(exc: object) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
