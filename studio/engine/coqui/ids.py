"""What a Coqui engine's id sequence carries besides the tokenizer's ids.

Why marks inside the ids: the render loop hands an engine id sequences and settings only
(:class:`~studio.engine.base.Engine`), and the cache key already holds the text and its
language. A multilingual model also needs the passage's language at synthesis, and XTTS
needs its sentence in pieces no longer than its per-request limit; both ride in the
sequence as ids no tokenizer uses (far above any vocabulary).
"""

from __future__ import annotations

from typing import Sequence

#: ``LANGUAGE_MARK + language id`` as the first item: the passage's language
LANGUAGE_MARK = 1 << 20
#: between two pieces of one sentence (XTTS's text limit): spoken one after the other, joined
PIECE_BREAK = LANGUAGE_MARK - 1


def with_language(ids: Sequence[int], language_id: int | None) -> list[int]:
    return ([LANGUAGE_MARK + language_id] if language_id is not None else []) + list(ids)


def split_language(seq: Sequence[int]) -> tuple[int | None, list[int]]:
    """``(language id or None, the rest)``."""
    if seq and seq[0] >= LANGUAGE_MARK:
        return int(seq[0]) - LANGUAGE_MARK, [int(i) for i in seq[1:]]
    return None, [int(i) for i in seq]


def pieces(ids: Sequence[int]) -> list[list[int]]:
    """The pieces of a sentence (one, when it has no :data:`PIECE_BREAK`)."""
    out: list[list[int]] = [[]]
    for i in ids:
        if i == PIECE_BREAK:
            out.append([])
        else:
            out[-1].append(int(i))
    return [p for p in out if p]


def joined(parts: Sequence[Sequence[int]]) -> list[int]:
    out: list[int] = []
    for n, part in enumerate(parts):
        out += ([PIECE_BREAK] if n else []) + list(part)
    return out
