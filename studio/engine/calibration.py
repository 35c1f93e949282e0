"""Which sentences calibrate an INT8 engine: one policy for every INT8 preset.

Why it matters: an INT8 engine's activation ranges are learnt from whatever is fed
to the calibrator. Calibrating on ten short phrases clips long, expressive
sentences; calibrating only on long ones wastes resolution. So every INT8 build
(``int8-cpu`` on ONNX Runtime, ``tensorrt-int8``) calibrates on:

1. :data:`BUILTIN_SENTENCES`, always: varied narration (short replies, dialogue,
   lists, numbers, questions, long clauses, many commas -- the pauses are where
   INT8 error shows);
2. plus the sentences of the project being rendered (passed in by the caller);
3. plus ``$CALIBRATION_DATA_PATH`` (:data:`CALIBRATION_DATA_ENV`): a UTF-8 text
   file of the user's own representative text, one sentence per line *or*
   paragraphs separated by blank lines, split into sentences by the text layer's
   splitter (the one a render uses).

Whitespace is normalised and duplicates (case-insensitive) dropped; the project's
and the file's sentences together are thinned to :data:`MAX_EXTRA_SENTENCES`,
evenly across their lengths, so short, typical and long sentences all stay in
proportion. Nothing here needs ONNX Runtime, torch or a GPU.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from studio.core.errors import EngineError
from studio.text.segment import split_paragraphs, split_spans

CALIBRATION_DATA_ENV = "CALIBRATION_DATA_PATH"

#: Varied English narration: short replies, dialogue, lists, numbers, questions, long
#: clauses, and plenty of commas / semicolons (the pauses are where INT8 error shows).
BUILTIN_SENTENCES: tuple[str, ...] = (
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

#: at most this many of the project's and the file's sentences join the built-in set
#: (each calibration sentence costs about a second or two of an INT8 build)
MAX_EXTRA_SENTENCES = 64
#: a calibration sentence is never cut: the voice takes up to MAX_IDS_PER_SENTENCE ids
_UNCAPPED = 1_000_000


def read_sentences_file(path: str | Path) -> list[str]:
    """Sentences from a text file: blank-line separated paragraphs, or one per line.

    A file with blank lines is read as paragraphs (hard-wrapped lines joined); a
    file without is one paragraph per line. Each is split into sentences.
    """
    text = Path(path).read_text(encoding="utf-8")
    paragraphs = split_paragraphs(text)
    if len(paragraphs) <= 1:
        paragraphs = [p for line in text.splitlines() for p in split_paragraphs(line)]
    return [span.text for p in paragraphs for span in split_spans(p, max_chars=_UNCAPPED)]


def dedupe(sentences: Iterable[str], seen: set[str] | None = None) -> list[str]:
    """Whitespace-normalised, empty-free, case-insensitively unique, first occurrence kept.

    ``seen`` carries the keys across calls (the built-in set, then the extras).
    """
    seen = set() if seen is None else seen
    out: list[str] = []
    for s in sentences:
        s = " ".join(str(s).split())
        if s and s.casefold() not in seen:
            seen.add(s.casefold())
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
    env: Mapping[str, str] | None = None,
    max_extra: int | None = MAX_EXTRA_SENTENCES,
) -> list[str]:
    """The calibration set (see the module doc): built-in + ``extra`` + the file.

    ``extra`` is the project's sentences; ``max_extra`` None keeps them all.
    Raises EngineError when ``$CALIBRATION_DATA_PATH`` names no file.
    """
    env = os.environ if env is None else env
    seen: set[str] = set()
    base = dedupe(BUILTIN_SENTENCES if builtin else (), seen)
    found: list[str] = list(extra or ())
    file_path = env.get(CALIBRATION_DATA_ENV)
    if file_path:
        path = Path(file_path).expanduser()
        if not path.is_file():
            raise EngineError(f"{CALIBRATION_DATA_ENV}: {path} is not a file")
        found.extend(read_sentences_file(path))
    more = dedupe(found, seen)
    if max_extra is not None:
        more = spread_by_length(more, max_extra)
    return base + more


def sentences_to_ids(
    sentences: Iterable[str], text_to_ids: Callable[[str, str], list[int]], language: str
) -> list[list[int]]:
    """Each sentence through the voice's own front end, as rendering does; empty results dropped."""
    out = []
    for s in sentences:
        ids = list(text_to_ids(s, language))
        if ids:
            out.append(ids)
    return out
