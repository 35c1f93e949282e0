"""What the book tree says about a row beyond its text: its flags, and lengths as h:mm:ss.

Why apart from :class:`~studio.ui.book_model.BookModel`: these are plain functions
of the frozen nodes (:mod:`studio.desktop.snapshot`), not of the model's indexes or its
overlay; the tree's Flags column, its tooltips and the "Flagged" filter
(:mod:`studio.ui.book_filter`) all say the same words, and the inspector, the
waveform, the pacing and export dialogs write lengths the way the tree does.
"""

from __future__ import annotations

from collections.abc import Collection

from studio.desktop.snapshot import ChapterNode, ParagraphNode, SentenceNode


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
