"""One chapter number and one label per chapter, for every place a chapter is named.

Why one function: the tree numbered rows one way, the queue and menus another,
export files a third and the track tags a fourth, so a producer looking for
"Chapter 30" found the book's Chapter 25. There is now one number: the chapter's
position in the manuscript as the producer arranged it (merges and splits
applied), 1-based -- the ``#`` that ``studio inspect`` prints and the number
``--chapters`` takes. Front matter and excluded chapters keep their number (so
the numbers of the chapters around them never move when one is excluded) and
say what they are in their label.

A chapter's *name* is its own heading (or the producer's rename), which may carry
the book's own numbering ("Chapter 25. Postscript"). The label puts the one number in
front of a name without a number (``"30. Postscript"``) and after one with its own,
as the track it is (``"Chapter 25. Postscript (track 30)"``): "30. Chapter 25." read as
two numbers for one chapter.

Export (file names, track tags, the manifest) calls :func:`chapter_labels` too,
so a file's number is the number the tree shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studio.project.records import SentenceRow
    from studio.project.store import Project


def chapter_number(index: int) -> int:
    """The chapter's one number, from its 0-based index."""
    return index + 1


def chapter_status(*, included: bool, front_matter: bool, reason: str = "") -> str:
    """What a chapter is besides a chapter of the book: "" (an included chapter),
    "front matter" (included although the import called it front matter),
    "table of contents, excluded", "excluded"."""
    why = reason or ("front matter" if front_matter else "")
    if included:
        return why
    return f"{why}, excluded" if why else "excluded"


#: a name that numbers itself: "Chapter 1", "CHAPTER XII.", "Part Two", "Book the First", "12. The Whale", "IV: ..."
_OWN_NUMBER = re.compile(
    r"^\s*(?:(?:chapter|chap\.|part|book|section|letter|canto|act|volume|vol\.|episode|stave|scene)\s+"
    r"(?:the\s+)?(?:\d+|[ivxlcdm]+\b|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|first|second"
    r"|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last)\b)|(?:\d+|[ivxlcdm]+)\s*[.:)](?:\s|$))",
    re.IGNORECASE)


def numbers_itself(name: str) -> bool:
    """Whether a chapter's name carries the book's own number ("Chapter 1. Loomings.")."""
    return bool(_OWN_NUMBER.match(name))


def chapter_label(index: int, name: str, *, included: bool = True, front_matter: bool = False,
                  reason: str = "", status: bool = True) -> str:
    """``"30. Postscript"``, or ``"Chapter 25. Postscript (track 30)"`` for a name with its own number;
    with ``status`` a front-matter or excluded chapter says so: ``"2. Etymology (front matter, excluded)"``."""
    note = chapter_status(included=included, front_matter=front_matter, reason=reason) if status else ""
    if numbers_itself(name):
        return f"{name} (track {chapter_number(index)}{', ' + note if note else ''})"
    text = f"{chapter_number(index)}. {name}"
    return f"{text} ({note})" if note else text


def chapters_label(indices: list[int] | tuple[int, ...], names: dict[int, str]) -> str:
    """Several chapters in one line (a queue job, a menu): by label when one, by number when many."""
    if len(indices) == 1:
        return chapter_label(indices[0], names.get(indices[0], ""), status=False)
    numbers = [str(chapter_number(i)) for i in indices]
    shown = ", ".join(numbers[:8]) + (f" \u2026 {numbers[-1]}" if len(numbers) > 8 else "")
    return f"Chapters {shown}"


@dataclass(frozen=True)
class ChapterLabel:
    """A chapter as every listing names it."""

    index: int
    name: str
    included: bool
    front_matter: bool
    reason: str = ""

    @property
    def number(self) -> int:
        return chapter_number(self.index)

    @property
    def status(self) -> str:
        return chapter_status(included=self.included, front_matter=self.front_matter, reason=self.reason)

    @property
    def label(self) -> str:
        return chapter_label(self.index, self.name, included=self.included, front_matter=self.front_matter,
                             reason=self.reason)


def chapter_labels(project: Project) -> list[ChapterLabel]:
    """Every chapter's number, name and status, in reading order (one cheap read)."""
    return [ChapterLabel(c.index, c.name, c.included, c.front_matter, c.reason)
            for c in project.chapter_control.all()]


def sentence_numbers(rows: Iterable[SentenceRow]) -> dict[int, int]:
    """Each sentence's 1-based number in its chapter, by sentence id (its title: 0).

    Why the chapter and not the paragraph: a list of sentences from all over a
    chapter (the Proof dock) numbered by the paragraph showed two "Sentence 4" rows
    in one chapter. ``rows`` in reading order (:meth:`Project.sentences`)."""
    numbers: dict[int, int] = {}
    seen: dict[int, int] = {}
    for row in rows:
        if row.is_title:
            numbers[row.id] = 0
            continue
        seen[row.chapter] = seen.get(row.chapter, 0) + 1
        numbers[row.id] = seen[row.chapter]
    return numbers
