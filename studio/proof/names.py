"""The names a project already knows, so the pronunciation check does not ask about them again.

Why these three sources: a guessed name is worth a producer's ear once, not in every
sentence it appears in. The project knows a name when its lexicon has an entry for
it (the producer decided how to say it), when the cast found it as a character
(the producer hears it in the Cast dock), or when the book prints it with a capital
more than once and never in lower case (a character or place that recurs: heard
again and again while producing, and said the same way each time; "never in lower
case" keeps ordinary words that open sentences out). A name printed once is not
known: it is the one a listener would not otherwise notice.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from studio.project.store import Project


#: how often a word must be printed with a capital to be a name the book uses
RECURS = 2
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")


def book_names(texts: Iterable[str], extra: Iterable[str] = ()) -> frozenset[str]:
    """Lower-cased words of the recurring capitalised names in ``texts``, with the words of ``extra``."""
    seen: Counter[str] = Counter()
    lower: set[str] = set()
    for text in texts:
        for m in _WORD.finditer(text):
            word = m.group(0)
            if word[0].isupper() and not word.isupper():
                seen[word.lower()] += 1
            elif word.islower():
                lower.add(word)
    known = {w for w, n in seen.items() if n >= RECURS and w not in lower}
    known.update(m.group(0).lower() for name in extra for m in _WORD.finditer(name))
    return frozenset(known)


def project_names(project: Project) -> frozenset[str]:
    """The names ``project`` knows: its lexicon's words, its cast, and the book's recurring names."""
    extra = [e.grapheme for e in project.lexicon.effective().entries]
    for member in project.cast.members():
        extra += [member.name, *member.aliases]
    return book_names((row.text for row in project.sentences()), extra)
