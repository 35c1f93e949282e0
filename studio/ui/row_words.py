"""What the book tree says about a row beyond its text: its flags, its tooltips, and lengths as h:mm:ss.

Why apart from :class:`~studio.ui.book_model.BookModel`: these are plain functions
of the frozen nodes (:mod:`studio.desktop.snapshot`), not of the model's indexes or its
overlay; the tree's Flags column, its tooltips and the "Flagged" filter
(:mod:`studio.ui.book_filter`) all say the same words, and the inspector, the
waveform, the pacing and export dialogs write lengths the way the tree does.
"""

from __future__ import annotations

from collections.abc import Collection

from studio.core.words import counted
from studio.desktop.snapshot import ChapterNode, ParagraphNode, SentenceNode
from studio.ui.direction_dialog import stressed_html


def fmt_duration(seconds: float | None) -> str:
    """``m:ss``, or ``h:mm:ss`` from an hour on; empty when unknown."""
    if seconds is None:
        return ""
    total = int(round(seconds))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def flag_words(node: ChapterNode | ParagraphNode | SentenceNode, para: ParagraphNode | None = None,
               to_review: Collection[int] = ()) -> list[str]:
    """The row's flags in words. ``para``: a sentence's paragraph (it says whether a voice
    speaks the sentence's language); ``to_review``: sentences proof-listening flagged."""
    if isinstance(node, SentenceNode):
        words = ["split"] if node.was_split else []
        if para is not None and para.unvoiced:
            words.append(f"no {node.language} voice")
        said = node.direction.words(node.text)  # the producer's direction, and a pause set after it
        words += [f"spoken by {node.speaker}"] if node.speaker else []
        return words + ([said] if said else []) + (
            [f"{node.pause_after:.2f} s after"] if node.pause_after is not None else []) + (
            ["needs listening"] if node.id in to_review else [])
    if isinstance(node, ParagraphNode):
        words = [f"no {node.effective_language} voice"] if node.unvoiced else []
        if node.has_split:
            words.append("split sentence")
        return words
    words = [f"long (~{node.estimated_s / 60:.0f} min)"] if node.too_long else []
    split = sum(1 for s in node.sentences if s.was_split)
    unvoiced = sum(1 for p in node.paragraphs if p.unvoiced)
    if split:
        words.append(f"{split} split")
    if unvoiced:
        words.append(f"{unvoiced} without voice")
    return words


def row_tooltip(node: ChapterNode | ParagraphNode | SentenceNode, column: str, flags: list[str],
                length_basis: str = "") -> str | None:
    """The tooltip of a row's cell in the tree's ``column`` (its heading: "Text", "Language",
    "State", "Flags", "Length"); ``flags``: the row's :func:`flag_words`; ``length_basis``: what
    unrendered sentences' lengths are estimated at ("" when the book has no timing yet)."""
    if isinstance(node, SentenceNode):
        if column == "State" and node.reason:
            return f"{node.state}: {node.reason}"
        if column == "Text" and node.direction.emphasis:
            return f"<p>{stressed_html(node.text, node.direction.emphasis)}</p><p>Double-click (or F2) to edit.</p>"
        if column == "Text":
            return f"{node.text}\n\nDouble-click (or F2) to edit; only this sentence is rendered again."
        return f"sentence {node.id}, synthesized {counted(node.synth_count, 'time')}"
    if isinstance(node, ChapterNode) and column == "Length" and length_basis:
        return (f"How long its file will play, pauses included: unrendered sentences at "
                f"{length_basis}, rendered ones at their real length")
    if isinstance(node, ParagraphNode) and column == "Language":
        return (f"detected {node.language} with {node.confidence:.0%} confidence"
                + (f"; spoken as {node.override} (your choice)" if node.override else "")
                + "\nRight-click to choose another language.")
    if isinstance(node, ParagraphNode) and column == "Text":
        return node.text
    if column == "Flags":
        return "; ".join(flags) or None
    return None
