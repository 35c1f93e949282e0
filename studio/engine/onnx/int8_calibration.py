"""How calibration sentences reach ONNX Runtime's quantizer (which sentences is
:mod:`studio.engine.calibration`'s policy).

Calibration feeds each sentence alone (``CalibStridedMinMax=1``): the histogram
collector cannot stack activations of different lengths, hence :class:`_IdsReader`
hands out one per sample.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np


class _IdsReader:
    """A ``CalibrationDataReader`` over one sentence per sample (with ``set_range``)."""

    def __init__(self, samples: Sequence[dict[str, np.ndarray]]) -> None:
        self._samples = list(samples)
        self._start, self._end = 0, len(self._samples)
        self._pos = 0

    def __len__(self) -> int:
        return len(self._samples)

    def set_range(self, start_index: int, end_index: int) -> None:
        self._start, self._end = start_index, min(end_index, len(self._samples))
        self._pos = self._start

    def get_next(self) -> dict[str, np.ndarray] | None:
        if self._pos >= self._end:
            return None
        item = self._samples[self._pos]
        self._pos += 1
        return item

    def rewind(self) -> None:
        self._pos = self._start


def _feeds(ids: Sequence[int], scales: Sequence[float], sid: int | None) -> dict[str, np.ndarray]:
    feeds = {
        "input": np.asarray([list(ids)], dtype=np.int64),
        "input_lengths": np.asarray([len(ids)], dtype=np.int64),
        "scales": np.asarray(scales, dtype=np.float32),
    }
    if sid is not None:
        feeds["sid"] = np.asarray([sid], dtype=np.int64)
    return feeds


def sentences_to_ids(sentences: Sequence[str], config_path: Path) -> list[list[int]]:
    """Each sentence through the voice's own front end, in the voice's own language."""
    from studio.engine.voice.phonemize import PiperFrontEnd
    from studio.engine.voice.config import VoiceConfig

    config = VoiceConfig.from_file(config_path)
    front = PiperFrontEnd(config)
    language = config.language_family or config.espeak_voice
    out = []
    for s in sentences:
        ids = front.text_to_ids(s, language)
        if len(ids) > 2:
            out.append(ids)
    return out
