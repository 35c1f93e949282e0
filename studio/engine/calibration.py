"""Calibration data for INT8 engines, and input-shape profiles, from real sentences.

Why this matters: an INT8 engine's activation ranges are learnt from whatever is
fed to the calibrator. Calibrating on ten short test phrases gives ranges that
clip long, expressive sentences; calibrating only on long ones wastes resolution.
So the pipeline is:

1. **Where the sentences come from**, first match wins:
   ``$CALIBRATION_DATA_PATH`` (a UTF-8 text file, one sentence per line *or*
   paragraphs separated by blank lines), else the sentences of the project being
   rendered (passed in by the caller), else :data:`BUILTIN_SENTENCES`, a small
   set covering short replies, dialogue, numbers, questions and long clauses.
2. **Select**: normalise whitespace, drop duplicates (case-insensitive), sort by
   length and pick evenly spaced items across that sorted list, so short,
   typical and long sentences are all represented in proportion to quantiles
   rather than to how often they occur.
3. **Model inputs**: each sentence through the voice's own front end
   (``engine.text_to_ids(text, language)``), exactly as rendering does.
4. **Batches**: padded ``int64`` id matrices + lengths. TensorRT's implicit INT8
   calibration runs at the *opt* shape of the calibration profile, so batches can
   be forced to one fixed ``(batch, length)`` (pad or truncate, and fill the last
   batch by cycling).

:func:`profile_shapes` turns the project's length distribution into the
``(min, opt, max)`` of a TensorRT optimization profile. :class:`CalibrationFeeder`
is the part of the TensorRT calibrator that needs no TensorRT: it hands out one
batch of named arrays at a time, checked against the declared shapes.

Nothing here needs a GPU, torch or TensorRT.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

CALIBRATION_DATA_ENV = "CALIBRATION_DATA_PATH"

#: Representative English narration used when neither a file nor a project is given.
BUILTIN_SENTENCES: tuple[str, ...] = (
    "Yes.",
    "No, thank you.",
    "Chapter One.",
    "She laughed.",
    "Where are you going?",
    "It was late, and the rain had not stopped.",
    "\"Come in,\" he said, without looking up from his desk.",
    "The train left the station at a quarter past seven.",
    "I don't know what you mean, and frankly, I don't care.",
    "Three hundred and twenty-six people signed the petition in 1998.",
    "Have you ever wondered why the sea is salty but the rivers are not?",
    "The old house at the end of the lane had been empty for as long as anyone could remember.",
    "Margaret folded the letter twice, slipped it into her coat pocket, and walked out into the cold.",
    "Dr. Smith arrived on Tuesday, the 14th of March, with two suitcases and a very small dog.",
    "Wait! Don't touch that!",
    "The committee, after much deliberation, decided to postpone the vote until the following spring.",
    "He counted the coins: one, two, three, four, five; not nearly enough for the ticket.",
    "In the beginning, there was only the sound of the wind through the tall grass.",
    "Why would anyone build a lighthouse so far from the sea?",
    "They walked in silence for a long time, each lost in thoughts they could not share.",
    "The price rose from $4.50 to $12.75 in less than a year, or nearly three hundred percent.",
    "Oh.",
    "Once upon a time, in a kingdom by the sea, there lived a girl who could not sleep.",
    "Although the evidence was circumstantial, the jury found it persuasive enough to convict him "
    "on all three counts, a verdict that would be debated for decades.",
    "When she finally reached the summit, exhausted and shivering, the clouds parted and the whole "
    "valley lay beneath her, green and gold and impossibly quiet.",
    "\"I suppose,\" said the professor slowly, \"that we shall have to begin again from the very first "
    "page, and this time, read it properly.\"",
    "The report, published on page 42, listed seventeen recommendations.",
    "Good morning, everyone.",
    "What time is it?",
    "The children ran down to the beach, shouting and laughing, their parents following at a slower pace.",
    "Nothing moved.",
    "Every winter the birds came back to the same tree, and every spring they left again.",
)


# ------------------------------------------------------------------ sources


@dataclass(frozen=True)
class CalibrationSource:
    """The sentences found and where they came from (``file:<path>``, ``project``, ``builtin``)."""

    sentences: tuple[str, ...]
    origin: str


_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’»)]*\s+(?=[\"'“‘«(]?[A-Z0-9À-ÖØ-Þ])")


def split_sentences(text: str) -> list[str]:
    """Split a paragraph on sentence-final punctuation followed by a capital/digit.

    Deliberately simple: calibration needs realistic lengths, not perfect
    sentence boundaries.
    """
    text = normalize(text)
    if not text:
        return []
    out: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        piece = text[start : match.end()].strip()
        if piece:
            out.append(piece)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def normalize(text: str) -> str:
    """Collapse whitespace runs to single spaces and strip."""
    return " ".join(text.split())


def read_sentences_file(path: str | Path) -> list[str]:
    """Sentences from a text file: one per line, or blank-line separated paragraphs.

    A file with blank lines is read as paragraphs (blocks between blank lines):
    each block's lines are joined (hard-wrapped prose) and split into sentences.
    A file without blank lines is one item per line (a line holding several
    sentences is still split).
    """
    text = Path(path).read_text(encoding="utf-8").replace("\r\n", "\n")
    blocks = [b for b in re.split(r"\n[ \t]*\n", text.strip()) if b.strip()]
    units = blocks if len(blocks) > 1 else text.splitlines()
    sentences: list[str] = []
    for unit in units:
        sentences.extend(split_sentences(unit))
    return sentences


def calibration_sentences(
    project_sentences: Sequence[str] | None = None,
    path: str | Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> CalibrationSource:
    """The raw sentences to calibrate on: explicit path / env file, else project, else built-in."""
    env = os.environ if env is None else env
    file_path = path if path is not None else env.get(CALIBRATION_DATA_ENV) or None
    if file_path is not None:
        file_path = Path(file_path).expanduser()
        if not file_path.is_file():
            raise FileNotFoundError(f"{CALIBRATION_DATA_ENV}: {file_path} is not a file")
        found = [s for s in read_sentences_file(file_path) if s]
        if found:
            return CalibrationSource(tuple(found), f"file:{file_path}")
    if project_sentences:
        found = [normalize(s) for s in project_sentences if normalize(s)]
        if found:
            return CalibrationSource(tuple(found), "project")
    return CalibrationSource(BUILTIN_SENTENCES, "builtin")


# ------------------------------------------------------------------ selection


def dedupe(sentences: Iterable[str]) -> list[str]:
    """Normalised, empty-free, case-insensitively unique, first occurrence kept."""
    seen: set[str] = set()
    out: list[str] = []
    for s in sentences:
        s = normalize(s)
        key = s.casefold()
        if s and key not in seen:
            seen.add(key)
            out.append(s)
    return out


def sample_across_lengths(items: Sequence, n: int, key: Callable = len) -> list:
    """Sort by ``key`` and take ``n`` evenly spaced items (shortest and longest included).

    Returns all items (sorted) when there are ``n`` or fewer. Deterministic.
    """
    if n <= 0:
        return []
    ordered = sorted(items, key=lambda x: (key(x), x) if isinstance(x, str) else key(x))
    if len(ordered) <= n:
        return ordered
    if n == 1:
        return [ordered[len(ordered) // 2]]
    step = (len(ordered) - 1) / (n - 1)
    idx = sorted({round(i * step) for i in range(n)})
    return [ordered[i] for i in idx]


def select_calibration_set(sentences: Iterable[str], n: int = 64) -> list[str]:
    """Dedupe, sort by length and sample ``n`` sentences across the length distribution."""
    return sample_across_lengths(dedupe(sentences), n)


def sentences_to_ids(
    sentences: Iterable[str], text_to_ids: Callable[[str, str], list[int]], language: str
) -> list[list[int]]:
    """Each sentence through the voice's front end; empty results are dropped."""
    out = []
    for s in sentences:
        ids = list(text_to_ids(s, language))
        if ids:
            out.append(ids)
    return out


# ------------------------------------------------------------------ batches


@dataclass(frozen=True)
class CalibrationBatch:
    """``ids``: int64 ``[B, T]`` zero-padded; ``lengths``: int64 ``[B]`` true lengths (<= T)."""

    ids: np.ndarray
    lengths: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.ids.shape)  # type: ignore[return-value]


def make_batches(
    id_seqs: Sequence[Sequence[int]],
    batch_size: int,
    *,
    length: int | None = None,
    pad_id: int = 0,
    fill_last: bool = True,
    sort: bool = True,
) -> list[CalibrationBatch]:
    """Group id sequences into padded batches.

    ``length``: force every batch to exactly this many columns (longer items are
    truncated, shorter padded); None pads each batch to its own longest item.
    ``fill_last``: make the last batch full by cycling from the start, so every
    batch has exactly ``batch_size`` rows (what a fixed calibration shape needs).
    ``sort``: batch neighbours in length order (less padding); otherwise keep order.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if length is not None and length < 1:
        raise ValueError(f"length must be >= 1, got {length}")
    seqs = [list(s) for s in id_seqs if len(s) > 0]
    if not seqs:
        return []
    if sort:
        seqs = sorted(seqs, key=len)
    groups = [seqs[i : i + batch_size] for i in range(0, len(seqs), batch_size)]
    if fill_last and len(groups[-1]) < batch_size:
        k = 0
        while len(groups[-1]) < batch_size:
            groups[-1].append(seqs[k % len(seqs)])
            k += 1
    batches = []
    for group in groups:
        width = length if length is not None else max(len(s) for s in group)
        ids = np.full((len(group), width), pad_id, dtype=np.int64)
        lengths = np.empty(len(group), dtype=np.int64)
        for row, seq in enumerate(group):
            seq = seq[:width]
            ids[row, : len(seq)] = seq
            lengths[row] = len(seq)
        batches.append(CalibrationBatch(ids, lengths))
    return batches


# ------------------------------------------------------------------ shapes


@dataclass(frozen=True)
class ShapeProfile:
    """One dynamic dimension's ``min <= opt <= max`` for an optimization profile."""

    min: int
    opt: int
    max: int

    def __post_init__(self) -> None:
        if not (1 <= self.min <= self.opt <= self.max):
            raise ValueError(f"need 1 <= min <= opt <= max, got {self.min}/{self.opt}/{self.max}")

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.min, self.opt, self.max)

    def token(self) -> str:
        return f"{self.min}-{self.opt}-{self.max}"


def _percentile(sorted_values: Sequence[int], pct: float) -> float:
    """Linear-interpolated percentile of already sorted values (numpy's default)."""
    return float(np.percentile(np.asarray(sorted_values, dtype=np.float64), pct))


def profile_shapes(
    lengths: Iterable[int],
    *,
    opt_percentile: float = 75.0,
    max_percentile: float = 99.0,
    max_cap: int | None = None,
    round_to: int = 1,
) -> ShapeProfile:
    """``(min, opt, max)`` from a length distribution.

    ``min`` = the shortest, ``opt`` = the ``opt_percentile`` (default p75: most
    batches are padded to their longest item, so the typical *padded* length sits
    above the median), ``max`` = the ``max_percentile`` (p99, so one freak
    paragraph does not blow up every kernel's workspace), capped at ``max_cap``.
    Longer inputs than ``max`` must be split or run by the fallback path.
    ``round_to`` rounds opt/max up to a multiple (kernels like multiples of 8).
    """
    values = sorted(int(v) for v in lengths if int(v) > 0)
    if not values:
        raise ValueError("profile_shapes needs at least one positive length")
    if not 0 <= opt_percentile <= max_percentile <= 100:
        raise ValueError("need 0 <= opt_percentile <= max_percentile <= 100")

    def up(v: float) -> int:
        v = math.ceil(v - 1e-9)
        return int(math.ceil(v / round_to) * round_to) if round_to > 1 else int(v)

    lo = values[0]
    hi = up(_percentile(values, max_percentile))
    if max_cap is not None:
        hi = min(hi, int(max_cap))
    hi = max(hi, lo)
    opt = min(max(up(_percentile(values, opt_percentile)), lo), hi)
    return ShapeProfile(lo, opt, hi)


# ------------------------------------------------------------------ feeding


class CalibrationFeeder:
    """Hands out calibration batches one at a time, as named arrays of fixed shapes.

    ``batches`` are mappings ``input name -> np.ndarray``; ``shapes`` the shape
    each input must have (TensorRT calibrates at the profile's opt shape and reads
    exactly ``prod(shape)`` elements from the pointer it is given, so a wrong
    shape would be silently misread: it is rejected here instead). The TensorRT
    calibrator's ``get_batch(names)`` is ``next_batch(names)`` + a copy to device.
    """

    def __init__(
        self,
        batches: Sequence[Mapping[str, np.ndarray]],
        shapes: Mapping[str, Sequence[int]],
        dtypes: Mapping[str, np.dtype | type] | None = None,
    ) -> None:
        self.shapes = {k: tuple(int(d) for d in v) for k, v in shapes.items()}
        self.dtypes = {k: np.dtype(v) for k, v in (dtypes or {}).items()}
        self._batches: list[dict[str, np.ndarray]] = []
        for i, batch in enumerate(batches):
            checked = {}
            for name, shape in self.shapes.items():
                if name not in batch:
                    raise ValueError(f"calibration batch {i} lacks input {name!r}")
                arr = np.asarray(batch[name])
                if tuple(arr.shape) != shape:
                    raise ValueError(
                        f"calibration batch {i} input {name!r} has shape {tuple(arr.shape)}, expected {shape}"
                    )
                if name in self.dtypes:
                    arr = arr.astype(self.dtypes[name], copy=False)
                checked[name] = np.ascontiguousarray(arr)
            self._batches.append(checked)
        batch_dims = {s[0] for s in self.shapes.values() if s}
        self.batch_size = batch_dims.pop() if len(batch_dims) == 1 else 1
        self._next = 0

    def __len__(self) -> int:
        return len(self._batches)

    @property
    def consumed(self) -> int:
        return self._next

    def reset(self) -> None:
        self._next = 0

    def next_batch(self, names: Sequence[str] | None = None) -> list[np.ndarray] | None:
        """The next batch's arrays in ``names`` order, or None when exhausted."""
        if self._next >= len(self._batches):
            return None
        batch = self._batches[self._next]
        self._next += 1
        names = list(self.shapes) if names is None else list(names)
        unknown = [n for n in names if n not in batch]
        if unknown:
            raise KeyError(f"calibrator asked for unknown inputs {unknown}; known: {list(batch)}")
        return [batch[n] for n in names]
