"""Write a Triton model repository: ``REPO/<model>/config.pbtxt`` + ``REPO/<model>/1/model.*``.

Why the config is validated before anything is written: a repository that Triton
refuses is found out on the server, at load time, in its log. Here the text goes
through Triton's own schema (:func:`~studio.engine.triton.config.validate_config`)
first, and the files are written atomically, so a repository on disk is one the
server accepts (schema-wise) or none at all.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from studio.core.errors import EngineError
from studio.core.files import write_atomic
from studio.engine.triton.config import ModelConfig, validate_config

log = logging.getLogger(__name__)

MODEL_FILES = {"onnxruntime_onnx": "model.onnx", "tensorrt_plan": "model.plan"}
#: what the studio writes beside the config, for people and for ``studio triton serve``
INFO_FILE = "studio.json"


@dataclass(frozen=True)
class ExportedModel:
    folder: Path
    model_file: Path
    config_file: Path
    config_text: str


def model_name_for(voice_id: str, preset: str) -> str:
    """A Triton model name (letters, digits, ``._-``) for a voice and preset."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{voice_id}.{preset}")


def write_repository(repo: Path, config: ModelConfig, model_bytes: bytes, info: dict | None = None) -> ExportedModel:
    """Validate ``config`` and write it with the model into ``repo`` (version 1)."""
    text = config.to_pbtxt()
    parsed = validate_config(text)
    if parsed.name != config.name:
        raise EngineError(f"config names model {parsed.name!r}, expected {config.name!r}")
    if not model_bytes:
        raise EngineError("no model to export")
    folder = Path(repo) / config.name
    (folder / "1").mkdir(parents=True, exist_ok=True)
    model_file = folder / "1" / MODEL_FILES[config.platform]
    write_atomic(model_file, model_bytes)
    config_file = folder / "config.pbtxt"
    write_atomic(config_file, text.encode("utf-8"))
    write_atomic(folder / INFO_FILE, json.dumps(info or {}, indent=2, sort_keys=True).encode("utf-8"))
    log.info("wrote %s (%d bytes) and %s", model_file, len(model_bytes), config_file)
    return ExportedModel(folder, model_file, config_file, text)
