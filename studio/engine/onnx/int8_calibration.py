"""Calibration data for the INT8 build: which sentences, and how they reach the model.

Kept apart from the build (:mod:`studio.engine.onnx.int8_build`) because choosing the
sentences -- built-in narration, the project's own, ``$CALIBRATION_DATA_PATH`` --
is policy that changes independently of how quantization runs. Calibration feeds
each sentence alone (``CalibStridedMinMax=1``): the histogram collector cannot stack
activations of different lengths, hence :class:`_IdsReader` hands out one per sample.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from studio.core.errors import EngineError

CALIBRATION_DATA_ENV = "CALIBRATION_DATA_PATH"

#: Varied English narration: short replies, dialogue, lists, numbers, questions, long
#: clauses, and plenty of commas / semicolons (the pauses are where INT8 error shows).
BUILTIN_CALIBRATION_SENTENCES: tuple[str, ...] = (
    "Yes.",
    "No, not yet.",
    "Chapter Seven.",
    "She smiled, but said nothing.",
    "Where did you put the keys?",
    "It was raining again, and the streets were nearly empty.",
    "\"Sit down,\" she said quietly, \"and tell me everything.\"",
    "The last train left the station at eleven minutes past midnight.",
    "I am not angry; I am simply tired of waiting.",
    "In 1987, the village had fewer than four hundred inhabitants.",
    "Have you ever noticed how the sea sounds different at night?",
    "He packed three things: a knife, a compass, and a photograph of his mother.",
    "Thunder rolled across the valley, low and patient, like a great animal turning in its sleep.",
    "Oh!",
    "Wait, wait, wait. Listen to me.",
    "The committee met on Thursday, the twelfth of October, to discuss the budget.",
    "Although the bridge had stood for two centuries, the engineers were worried about its foundations.",
    "Somewhere in the house, a clock was ticking.",
    "Why would anyone leave a door like that unlocked?",
    "Breathe in. Hold it. Now breathe out, slowly.",
    "The price of bread rose from two dollars to nearly five in a single winter.",
    "Maria laughed, shook her head, and went back to her book.",
    "If you follow the river north, you will reach the old mill before sunset.",
    "Nobody answered.",
    "The professor adjusted his glasses, cleared his throat, and began to read from the yellowed page.",
    "Run!",
    "They had walked for hours; their feet were blistered, their water almost gone.",
    "What, exactly, do you expect me to say?",
    "The garden was overgrown with roses, nettles, ivy, and something he could not name.",
    "At dawn the fishing boats returned, their decks silver with the night's catch.",
    "Please, take a seat.",
    "The letter was short: three lines, no signature, and a date that made no sense.",
    "She had always believed that stories were a kind of map, and that every map was a promise.",
    "Forty-two steps led down to the cellar, and every one of them creaked.",
    "Are you sure?",
    "Outside, the wind pushed against the windows, rattling the old frames.",
    "He was, in every sense of the word, a stranger here.",
    "The children counted aloud: one, two, three, four, five, ready or not!",
    "By the time the doctor arrived, the fever had broken and the boy was asleep.",
    "Silence.",
    "It is a truth universally acknowledged that a single man in possession of a good fortune "
    "must be in want of a wife.",
    "Far away, beyond the hills and the dark line of the forest, a single light was burning.",
)


def _read_sentence_file(path: str | Path) -> list[str]:
    try:
        from studio.engine.calibration import read_sentences_file
    except ImportError:  # pragma: no cover - sibling module always present in the package
        return [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return read_sentences_file(path)


#: at most this many of the project's / file's sentences join the built-in set (each
#: calibration sentence costs about a second or two of build time)
MAX_EXTRA_CALIBRATION_SENTENCES = 64


def _dedupe(sentences: Iterable[str], seen: set[str] | None = None) -> list[str]:
    seen = set() if seen is None else seen
    out: list[str] = []
    for s in sentences:
        s = " ".join(str(s).split())
        if s and s.lower() not in seen:
            seen.add(s.lower())
            out.append(s)
    return out


def spread_by_length(sentences: Sequence[str], n: int) -> list[str]:
    """``n`` sentences evenly spaced over the length-sorted list (original order kept)."""
    if n <= 0:
        return []
    if len(sentences) <= n:
        return list(sentences)
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    picks = {order[int(k)] for k in np.linspace(0, len(order) - 1, n).round().astype(int)}
    return [s for i, s in enumerate(sentences) if i in picks]


def gather_calibration_sentences(
    extra: Sequence[str] | None = None,
    *,
    builtin: bool = True,
    env: dict[str, str] | None = None,
    max_extra: int | None = MAX_EXTRA_CALIBRATION_SENTENCES,
) -> list[str]:
    """Built-in narration + ``extra`` (the project's sentences) + ``$CALIBRATION_DATA_PATH``.

    Whitespace-normalised, empty and duplicate (case-insensitive) sentences dropped,
    order kept. The project's and the file's sentences together are thinned to
    ``max_extra``, evenly across their lengths (None: keep all).
    """
    env = dict(os.environ) if env is None else env
    seen: set[str] = set()
    base = _dedupe(BUILTIN_CALIBRATION_SENTENCES if builtin else (), seen)
    found: list[str] = list(extra or ())
    file_path = env.get(CALIBRATION_DATA_ENV)
    if file_path:
        path = Path(file_path).expanduser()
        if not path.is_file():
            raise EngineError(f"{CALIBRATION_DATA_ENV}: {path} is not a file")
        found.extend(_read_sentence_file(path))
    more = _dedupe(found, seen)
    if max_extra is not None:
        more = spread_by_length(more, max_extra)
    return base + more


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
