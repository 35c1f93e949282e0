"""The book's vocabulary as the recogniser's prompt: its names and rare words, and the sentence before.

Why: Whisper writes a rare name or an archaic word it has never seen as the nearest
common words ("Hecla" as "heckler"), and each such spelling is a stretch the
judgement must explain away. A prompt (the decoder's "previous text") that holds the
words of the book the window is expected to contain, and the sentence before it,
makes the recogniser spell them as the book does. The cost: a prompt can make it
write the book's word where the voice said another, so it is measured for recall
(docs/proof-listening-benchmark.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from studio.proof.names import book_names
from studio.proof.pronounce import in_dictionary

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")


@dataclass(frozen=True)
class Vocabulary:
    """Lower-cased words of the book worth prompting with: its names and the words no dictionary holds."""

    words: frozenset[str] = field(default_factory=frozenset)

    def prompt(self, texts: Sequence[str], before: str = "") -> str:
        """The book's words that ``texts`` (a window's sentences) contain, then the sentence before them."""
        seen: dict[str, None] = {}
        for text in texts:
            for m in _WORD.finditer(text):
                if m.group(0).lower() in self.words:
                    seen.setdefault(m.group(0), None)
        head = ", ".join(seen)
        return " ".join(p for p in ((head + ".") if head else "", before.strip()) if p)


def book_vocabulary(texts: Iterable[str], extra: Iterable[str] = ()) -> Vocabulary:
    """The names ``texts`` recur with, every word of them no pronouncing dictionary holds, and ``extra``
    (the lexicon's words, the cast)."""
    texts = list(texts)
    rare = {m.group(0).lower() for t in texts for m in _WORD.finditer(t)
            if len(m.group(0)) > 2 and not m.group(0).isupper() and not in_dictionary(m.group(0))}
    return Vocabulary(frozenset(rare | book_names(texts, extra)))
