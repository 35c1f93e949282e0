"""A voice family that lives only in the tests: each voice is a ``NAME.tone.json`` file in the
voices folder (``{"hz": 440, "language": "en_US", "sample_rate": 16000}``) and says every
sentence as a tone, a tenth of a second per character.

It is added the way any family outside the studio is: one registry line, read from
``$STUDIO_VOICE_FAMILIES`` (:func:`tone_env`), so ``studio voices``, ``studio render`` and
the desktop list and render it without a change above the engine. No tests in here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from studio.core.lexicon import Lexicon
from studio.engine.base import Engine, SynthesisSettings
from studio.engine.family import Found, VoiceFamily
from studio.engine.families import EXTRA_ENV
from studio.engine.voice.info import VoiceAbilities, VoiceInfo

TESTS = Path(__file__).resolve().parents[1]
#: the registry line
LINE = "support.tone_family:FAMILY"
SUFFIX = ".tone.json"


def write_tone_voice(voices_dir: Path, name: str = "a440", hz: float = 440.0, language: str = "en_US",
                     sample_rate: int = 16000) -> str:
    """A tone voice in ``voices_dir``; its id (``tone:NAME``)."""
    voices_dir.mkdir(parents=True, exist_ok=True)
    (voices_dir / f"{name}{SUFFIX}").write_text(
        json.dumps({"hz": hz, "language": language, "sample_rate": sample_rate}), encoding="utf-8")
    return f"tone:{name}"


def tone_env(voices_dir: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment in which the tone family is registered (a ``studio`` subprocess imports it
    from the tests folder) and ``voices_dir`` is the voices folder."""
    env = dict(os.environ if base is None else base)
    env[EXTRA_ENV] = LINE
    env["STUDIO_VOICES_DIR"] = str(voices_dir)
    env["PYTHONPATH"] = os.pathsep.join(x for x in (str(TESTS), env.get("PYTHONPATH", "")) if x)
    return env


class ToneEngine(Engine):
    """Characters in, a tone out: ``len(ids) / 10`` seconds at the voice's pitch."""

    name = "tone"

    def __init__(self, hz: float, sample_rate: int) -> None:
        self.hz, self.rate = hz, sample_rate

    @property
    def sample_rate(self) -> int:
        return self.rate

    def load(self) -> None:
        pass

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return [ord(c) for c in text if not c.isspace()]

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        out = []
        for item in ids:
            t = np.arange(int(len(item) * self.rate / 10)) / self.rate
            out.append((0.3 * np.sin(2 * np.pi * self.hz * t)).astype(np.float32))
        return out

    def describe(self) -> str:
        return f"tone at {self.hz:g} Hz, {self.rate} Hz"


class ToneFamily(VoiceFamily):
    name = "tone"
    preset_words = {"fp32-cpu": "A pure tone per sentence, a tenth of a second per character."}

    def voices(self, user_dir: Path | None, hub_dir: Path | None) -> Iterable[Found]:
        for path in sorted(user_dir.glob(f"*{SUFFIX}")) if user_dir is not None else ():
            yield path, lambda p=path: self._info(p)

    def _info(self, path: Path) -> VoiceInfo:
        data = json.loads(path.read_text(encoding="utf-8"))
        name = path.name[: -len(SUFFIX)]
        return VoiceInfo(id=f"tone:{name}", name=f"Tone {name}", family=self.name, language=data["language"],
                         sample_rate=int(data["sample_rate"]), model_path=path, config_path=path, source="user",
                         abilities=VoiceAbilities(languages=(data["language"][:2],), presets=("fp32-cpu",)))

    def open_engine(self, preset: Any, voice: VoiceInfo, *, device: str | None = None, threads: int | None = None,
                    **kw: Any) -> Engine:
        data = json.loads(voice.config_path.read_text(encoding="utf-8"))
        return ToneEngine(float(data["hz"]), voice.sample_rate)


FAMILY = ToneFamily()
