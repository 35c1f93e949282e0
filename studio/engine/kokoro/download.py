"""Downloads of Kokoro packs and models into ``<voices>/kokoro/``: resumable, checked.

What can be fetched (``studio voices add``):

* ``kokoro:af_heart`` (any pack name): ``voices/<name>.pt`` from the Kokoro-82M
  repository, checked by reading it as a 510 x 1 x 256 pack;
* ``kokoro:model-fp32``, ``kokoro:model-fp16``, ``kokoro:model-int8``: the official v1.0
  ONNX exports, checked as an ONNX graph with Kokoro's inputs (the INT8 one also
  against the offline parts' SHA-256: it is the same file).

Resumable: the bytes go to ``<name>.part`` beside the target; a second try asks the
server for the rest (``Range``) and appends, or starts over when the server sends
the whole file. Only a checked file takes its final name.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Callable

from studio.core.errors import EngineError, VoiceError
from studio.engine.family import Progress
from studio.engine.kokoro.model import USER_MODELS
from studio.engine.kokoro.packs import ID_PREFIX, USER_FOLDER, load_pack
from studio.engine.voice.download import fetch_resumable

_LOGGER = logging.getLogger(__name__)

PACKS_URL = "https://huggingface.co/hexgrad/Kokoro-82M/resolve/main"
MODELS_URL = "https://github.com/thewh1teagle/kokoro-onnx/releases/download/model-files-v1.0"



def is_kokoro(name: str) -> bool:
    """Whether ``studio voices add NAME`` names a Kokoro pack or model."""
    return name.startswith(ID_PREFIX)


def download(name: str, folder: Path, *, packs_url: str = PACKS_URL, models_url: str = MODELS_URL,
             timeout: float = 30.0, progress: Progress | None = None) -> Path:
    """Fetch ``kokoro:<pack>`` or ``kokoro:model-<precision>`` into ``folder/kokoro``; the final path."""
    what = name.removeprefix(ID_PREFIX)
    target_dir = folder / USER_FOLDER
    target_dir.mkdir(parents=True, exist_ok=True)
    if what.startswith("model-"):
        precision = what.removeprefix("model-")
        if precision not in USER_MODELS:
            raise VoiceError(f"no Kokoro model {what!r}; choose model-fp32, model-fp16 or model-int8")
        file = USER_MODELS[precision]
        return fetch(f"{models_url.rstrip('/')}/{file}", target_dir / file, timeout, progress, _check_model)
    if not what or not all(c.isalnum() or c == "_" for c in what):
        raise VoiceError(f"{name!r}: a Kokoro pack is named like kokoro:af_heart")
    return fetch(f"{packs_url.rstrip('/')}/voices/{what}.pt", target_dir / f"{what}.pt", timeout, progress,
                 lambda path: load_pack(path, what, ".pt"))


def fetch(url: str, target: Path, timeout: float, progress: Progress | None,
          check: Callable[[Path], object]) -> Path:
    """``url`` to ``target``, resumable; ``check(part)`` must pass before it takes its name."""
    fetch_resumable(url, target, timeout, progress, check)
    return target


def _check_model(path: Path) -> None:
    """A Kokoro v1.0 ONNX graph (tokens, style, speed in); the INT8 export must be the offline model's bytes."""
    import onnx

    from studio.engine.kokoro.model import expected_checksum

    try:
        graph = onnx.load(str(path), load_external_data=False).graph
    except Exception as exc:  # protobuf's DecodeError and friends
        raise VoiceError(f"not an ONNX model ({type(exc).__name__})") from exc
    inputs = {i.name for i in graph.input}
    if not {"style", "speed"} <= inputs or not inputs & {"tokens", "input_ids"}:
        raise VoiceError(f"not a Kokoro model (its inputs are {', '.join(sorted(inputs))})")
    if path.name.startswith(USER_MODELS["int8"]):
        try:
            expected = expected_checksum()
        except EngineError:  # the offline model is not installed: nothing to compare with
            return
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != expected:
            raise VoiceError(f"SHA-256 {digest[:12]}... is not the Kokoro v1.0 INT8 model's")
