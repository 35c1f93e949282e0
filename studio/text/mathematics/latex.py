"""LaTeX mathematics in running text (Markdown, plain text, an alttext) -> the same words as MathML.

Why through MathML: one reader (:mod:`studio.text.mathematics.speech`) serves an EPUB's
MathML and an author's ``$x^2$`` alike, so a rule is fixed once. latex2mathml (pure
Python, MIT) parses the LaTeX; what it cannot parse is left as printed.

Where an expression is (the rules Pandoc uses, so a price is not mathematics): ``$$...$$``
and ``\\[...\\]`` are display equations; ``\\(...\\)`` and ``$...$`` inline ones, where the
opening ``$`` is followed by a non-space, the closing ``$`` follows a non-space and is not
followed by a digit ("$5 and $10" holds no expression).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from lxml import etree

from studio.text.mathematics.speech import say_mathml

log = logging.getLogger(__name__)

#: display ($$ or \[) first, then inline (\( or a single $)
EXPRESSION = re.compile(
    r"\$\$(?P<d1>[^$]{1,4000}?)\$\$"
    r"|\\\[(?P<d2>.{1,4000}?)\\\]"
    r"|\\\((?P<i1>.{1,2000}?)\\\)"
    r"|(?<![\\$\w])\$(?P<i2>[^\s$](?:[^$\n]{0,1000}?[^\s$\\])?)\$(?!\d)",
    re.DOTALL,
)
_LATEX_HINT = re.compile(r"\\[A-Za-z]+|[\^_{}]")


def has_latex(text: str) -> bool:
    return "$" in text or "\\(" in text or "\\[" in text


@lru_cache(maxsize=4096)
def say_latex(latex: str, language: str) -> str | None:
    """The words of one LaTeX expression, or None when it does not parse."""
    from latex2mathml.converter import convert

    try:
        root = etree.fromstring(convert(latex.strip()).encode("utf-8"))
    except Exception as err:  # latex2mathml raises its own errors and plain ones on odd input
        log.debug("LaTeX %r left as printed (%s)", latex[:80], err)
        return None
    return say_mathml(root, language) or None


def say_math(el: etree._Element, language: str) -> str:
    """A ``<math>`` element's words: its ``aria-label`` or ``alttext`` when that says it in words,
    else its MathML said by the rules, else its alttext read as LaTeX; a placeholder alttext
    ("Alternative text not available") is never said."""
    from studio.text.content import meaningful

    label = " ".join((el.get("aria-label") or el.get("alttext") or "").split())
    if label and not meaningful(label, language):
        label = ""
    if label and not _LATEX_HINT.search(label) and len(_PROSE_WORD.findall(label)) >= 2:
        return label
    said = say_mathml(el, language)
    if said or not label:
        return said
    return say_latex(label, language) or label


_PROSE_WORD = re.compile(r"[^\W\d_]{3,}")


def spoken_pieces(text: str, language: str) -> list[tuple[str, bool]]:
    """``text`` cut into ``(piece, display)``: running text with its inline expressions said,
    and each display expression a piece of its own (``True``), to be read after a pause."""
    if not has_latex(text):
        return [(text, False)]
    pieces: list[tuple[str, bool]] = []
    current: list[str] = []
    pos = 0
    for m in EXPRESSION.finditer(text):
        display = m.group("d1") is not None or m.group("d2") is not None
        latex = next(g for g in (m.group("d1"), m.group("d2"), m.group("i1"), m.group("i2")) if g is not None)
        said = say_latex(latex, language)
        if said is None:
            continue
        current.append(text[pos:m.start()])
        pos = m.end()
        if display:
            pieces.append(("".join(current), False))
            pieces.append((said, True))
            current = []
        else:
            current.append(said)
    current.append(text[pos:])
    pieces.append(("".join(current), False))
    return [(p, d) for p, d in pieces if p.strip()]


def speak_latex_in(text: str, language: str) -> str:
    """``text`` with every expression said in place (display ones too): for a title or a caption."""
    return " ".join(p for p, _ in spoken_pieces(text, language))
