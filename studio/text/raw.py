"""What the per-format readers hand to the importer, before normalization.

Why a separate, mutable shape: readers build chapters incrementally (an EPUB
chapter can span several files), while the public types in ``studio.core.types``
are frozen and must hold fully segmented, language-tagged text. Keeping the raw
shape tiny means every format shares one normalization/segmentation/language path.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Block:
    """One block of running text as found in the source.

    ``level`` is the heading level (1-6) when the source marks it as a heading,
    ``ids`` the anchors that point at it (EPUB tables of contents link to them),
    ``types`` the semantic tags around it (EPUB ``epub:type``: ``titlepage``, ...).
    """

    text: str
    level: int | None = None
    ids: tuple[str, ...] = ()
    types: frozenset[str] = frozenset()


@dataclass
class RawChapter:
    """A chapter whose paragraphs are still raw text (may contain line breaks)."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    front_matter: bool = False
    front_reason: str = ""  # why front matter, when the reader knows ("table of contents")


@dataclass
class RawBook:
    """Metadata (as found, not yet normalized) plus raw chapters."""

    title: str = ""
    author: str = ""
    language: str = ""
    chapters: list[RawChapter] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
