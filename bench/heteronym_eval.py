"""Noun/verb heteronyms: the neighbour rules alone against the rules with gruut's tagger.

Run ``python bench/heteronym_eval.py`` from the repository root. The labelled set is
``tests/data/normalize/heteronyms_pos.tsv`` (195 sentences of two Jane Austen novels and 70 of
Bierce's Devil's Dictionary, labelled by hand before any rule used the tagger; the readings of
"bow" and "close" were corrected after reading the Austen part's errors, so the Bierce part is
the held-out one): for each, is the rules' respelling
the right reading there or espeak-ng's own? Prints accuracy per candidate and per word,
and the milliseconds a sentence costs with the tagger.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from studio.text.normalize import heteronyms  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "normalize" / "heteronyms_pos.tsv"


def load() -> list[tuple[str, str, str, str]]:
    """(label, word, sentence, source) rows; a "# Author, Title" line starts a source."""
    rows, source = [], ""
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line.startswith("# ") and "public domain" in line:
            source = line[2:].split(":", 1)[0]
        elif line and not line.startswith("#"):
            label, word, sentence = line.split("\t", 2)
            rows.append((label, word, sentence, source))
    return rows


def decided(sentence: str, word: str, tagged: bool) -> str:
    """'respelled' or 'printed' for the first ``word`` of ``sentence``."""
    m = next(m for m in heteronyms.WORDS.finditer(sentence) if m.group(0).lower() == word)
    return "printed" if heteronyms.reading(m, tagged=tagged) == m.group(0) else "respelled"


def main() -> int:
    rows = load()
    for source in dict.fromkeys(r[3] for r in rows):
        part = [r for r in rows if r[3] == source]
        print(f"{source} ({len(part)} sentences)")
        for name, tagged in (("rules alone", False), ("rules + tagger", True)):
            start = time.perf_counter()
            right, wrong = 0, Counter()
            for label, word, sentence, _ in part:
                if decided(sentence, word, tagged) == label:
                    right += 1
                else:
                    wrong[word] += 1
            ms = (time.perf_counter() - start) / len(part) * 1000
            print(f"  {name:16s} {right}/{len(part)} = {100 * right / len(part):.1f} %  ({ms:.1f} ms a sentence)  "
                  f"wrong: {', '.join(f'{w} {n}' for w, n in wrong.most_common()) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
