"""Kokoro-82M on ONNX Runtime behind the studio's Engine interface.

One sentence per call (Kokoro's style vector depends on the sentence's token count,
so a padded batch would style every item by the longest), and several single-thread
streams on one shared session for throughput (:mod:`studio.engine.serving.streams`
runs them): ONNX Runtime runs a call with one intra-op thread on its caller's thread,
so N streams need the weights once. Spinning is off: on a shared 2-core machine a
spinning thread takes the core another stream needs.

A sentence over Kokoro's 510 tokens is cut at a clause mark, else a word boundary
(:func:`~studio.engine.kokoro.frontend.split_tokens`); each piece gets the style row
of its own length, and the pieces are joined with a short clause pause and the shared
seam fades (:mod:`studio.engine.waveform`), so the cut makes no click.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.core.lexicon import Lexicon
from studio.engine import shared
from studio.engine.base import Engine, PendingBuild, SynthesisSettings
from studio.engine.kokoro.frontend import SAMPLE_RATE, KokoroFrontEnd, split_tokens
from studio.engine.kokoro.model import ModelChoice, prepare
from studio.engine.waveform import joined, limited

_LOGGER = logging.getLogger(__name__)

#: silence between the pieces of a sentence cut at the token limit (a clause pause)
JOIN_PAUSE_S = 0.12
#: what counts as silence at a piece's ends: Kokoro leaves ~0.35 s before and ~0.65 s after speech,
#: trimmed so the project's pauses are the pauses (as with every voice); the tail keeps more, so a
#: fading sound is not cut (proof-listening flagged 0.04 s as "cut short")
SILENCE = 0.003
LEAD_KEEP_S = 0.03
TAIL_KEEP_S = 0.12


def session_options(threads: int):
    """One intra-op thread per stream by default, no spinning (see the module notes)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    return options


class KokoroEngine(Engine):
    """One Kokoro voice (a pack or a blend) on one model file, ``threads`` intra-op threads."""

    name = "kokoro"

    def __init__(self, choice: ModelChoice, pack: np.ndarray | None, language: str, *, threads: int | None = None,
                 pack_loader=None, label: str = "") -> None:
        self.choice = choice
        self._pack = pack
        self._pack_loader = pack_loader
        self.front_end = KokoroFrontEnd(language)
        self.threads = max(1, int(threads or 1))
        self.label = label
        self._key: tuple[str, str, int] | None = None
        self._session = None
        self._lock = threading.Lock()

    @property
    def sample_rate(self) -> int:
        return SAMPLE_RATE

    def pending_build(self) -> PendingBuild | None:
        if self._session is not None or self.choice.cached_path() is not None:
            return None
        return PendingBuild("the Kokoro model assembled and built for this CPU", "under a minute")

    def load(self) -> None:
        """Assemble/build the model if needed (once, in the cache), open or share its session."""
        with self._lock:
            if self._session is not None:
                return
            if self._pack is None:
                self._pack = self._pack_loader()
            path = str(prepare(self.choice))
            key = ("kokoro", path, self.threads)
            self._session, self._key = shared.acquire(key, lambda: self._open(path)), key

    def _open(self, path: str) -> Any:
        import onnxruntime as ort

        try:
            return ort.InferenceSession(path, session_options(self.threads), providers=["CPUExecutionProvider"])
        except Exception as exc:  # ORT raises its own types for a damaged file
            raise EngineError(f"the Kokoro model {Path(path).name} cannot be opened: {exc}") from exc

    def text_to_ids(self, text: str, language: str, lexicon: Lexicon | None = None) -> list[int]:
        return self.front_end.text_to_ids(text, language, lexicon)

    def synthesize_batch(self, ids: Sequence[Sequence[int]], settings: SynthesisSettings) -> list[np.ndarray]:
        self.load()
        speed = float(np.clip(1.0 / max(settings.length_scale, 1e-3), 0.5, 2.0))
        return [self._sentence(list(seq), speed) for seq in ids]

    def _sentence(self, ids: list[int], speed: float) -> np.ndarray:
        if not ids:
            raise EngineError("nothing Kokoro can say: the sentence has no letters it has sounds for")
        # Kokoro's waveform is not limited and peaks above full scale: the shared peak rule scales it
        pieces = [_trimmed(self._piece(p, speed)) for p in split_tokens(ids)]
        return limited(joined(pieces, SAMPLE_RATE, pause_s=JOIN_PAUSE_S, outer=True))

    def _piece(self, ids: list[int], speed: float) -> np.ndarray:
        assert self._pack is not None and self._session is not None
        style = self._pack[min(len(ids), len(self._pack)) - 1].reshape(1, -1)
        feed = {"tokens": np.array([[0, *ids, 0]], np.int64), "style": style.astype(np.float32),
                "speed": np.array([speed], np.float32)}
        return np.asarray(self._session.run(None, feed)[0], np.float32).ravel()

    def describe(self) -> str:
        return (f"{self.label or 'Kokoro'}: {self.choice.what}, ONNX Runtime CPU, {self.threads} thread(s), "
                f"spinning off, at {SAMPLE_RATE} Hz")

    def close(self) -> None:
        with self._lock:
            key, session, self._key, self._session = self._key, self._session, None, None
            if key is not None:
                shared.release(key, session)


def _trimmed(audio: np.ndarray) -> np.ndarray:
    loud = np.flatnonzero(np.abs(audio) > SILENCE)
    if loud.size == 0:
        return audio
    return audio[max(0, loud[0] - int(LEAD_KEEP_S * SAMPLE_RATE)): loud[-1] + int(TAIL_KEEP_S * SAMPLE_RATE)]
