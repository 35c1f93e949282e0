"""Scoring spoken forms against the labelled set (tests/data/normalize/*.tsv).

Why a shared module: the benchmark (bench/normalize_eval.py) and the test that holds
the accuracy targets must judge alike. An item is right when the spoken form matches
one of its accepted forms after both are lower-cased with hyphens, dashes and
punctuation dropped ("twenty-one" = "twenty one", "o'clock" = "oclock"): a narrator
says them alike, and espeak-ng reads them alike.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "normalize"
LANGUAGES = ("en", "de", "fr", "es", "it")


@dataclass(frozen=True)
class Item:
    """One labelled sentence: what is printed, and every spoken form a narrator may say."""

    language: str
    category: str
    text: str
    accepted: tuple[str, ...]


def load_items(folder: Path = DATA, languages: Iterable[str] = LANGUAGES) -> list[Item]:
    items = []
    for lang in languages:
        for line in (folder / f"{lang}.tsv").read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            category, text, accepted = line.split("\t")
            items.append(Item(lang, category, text, tuple(a.strip() for a in accepted.split(" | "))))
    return items


_DROP = re.compile(r"[^\w\s]")


def canonical(text: str) -> str:
    """Lower case, hyphens and dashes as spaces, no punctuation, single spaces."""
    text = unicodedata.normalize("NFC", text).lower()
    text = re.sub(r"[-\u2010-\u2015]", " ", text)
    text = text.replace("'", "").replace("\u2019", "")
    return " ".join(_DROP.sub(" ", text).split())


def is_right(item: Item, spoken: str) -> bool:
    said = canonical(spoken)
    return any(said == canonical(a) for a in item.accepted)


def score(items: list[Item], say: Callable[[str, str], str]) -> dict[tuple[str, str], tuple[int, int]]:
    """``{(language, category): (right, total)}`` plus ``(language, "all")`` per language."""
    out: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        ok = is_right(item, say(item.text, item.language))
        for key in ((item.language, item.category), (item.language, "all")):
            out[key][0] += ok
            out[key][1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def wrong(items: list[Item], say: Callable[[str, str], str]) -> list[tuple[Item, str]]:
    """The items a system gets wrong, with what it said (for reading, and test messages)."""
    out = []
    for item in items:
        spoken = say(item.text, item.language)
        if not is_right(item, spoken):
            out.append((item, spoken))
    return out
