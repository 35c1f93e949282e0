"""Which rows of the book tree show: a mode (flagged, no voice, not rendered, failed),
a language and a text search.

Why a proxy over the model: filters change nothing in the data, and Qt's
recursive filtering keeps a chapter visible when any row under it matches. A
text search alone needs no recursion: its answer (built off the GUI thread) lists
the rows above every match, so each row costs one set lookup and the rows under
a collapsed chapter are not looked at until it is expanded.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel

from studio.desktop.search import RowKey, SearchResult
from studio.desktop.snapshot import ChapterNode, ParagraphNode, SentenceNode
from studio.ui.book_model import StateRole


class BookFilter(QSortFilterProxyModel):
    """Shows all rows, or only flagged / not rendered / failed ones, plus a text search."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.mode = "All"
        self.needle = ""
        self.language = ""  # "" : any
        self.matches: SearchResult | None = None
        self.setRecursiveFilteringEnabled(True)

    def set_language(self, code: str) -> None:
        """Only paragraphs spoken in ``code`` (and their sentences); "" shows every language."""
        self._refilter(lambda: setattr(self, "language", code))

    def set_mode(self, mode: str) -> None:
        self._refilter(lambda: setattr(self, "mode", mode))

    def set_needle(self, text: str) -> None:
        """Clear the search (a non-empty needle is applied with its answer, see :meth:`set_matches`)."""
        if not text.strip():
            self._refilter(lambda: (setattr(self, "needle", ""), setattr(self, "matches", None)))

    def set_matches(self, result: SearchResult) -> None:
        """The rows a search found (computed off the GUI thread): only a set lookup per row here."""
        self._refilter(lambda: (setattr(self, "needle", result.needle.strip().lower()), setattr(self, "matches", result)))

    def _refilter(self, change) -> None:
        """Apply a filter change: every mapping is dropped, so only the rows the tree looks
        at are filtered again (a collapsed chapter's children wait until it is opened)."""
        change()
        self.invalidate()
        self.setRecursiveFilteringEnabled(not self._search_only())  # after: nothing mapped to refilter

    def _search_only(self) -> bool:
        """Only a text search filters: its answer names every row to show (ancestors
        included), so no row needs its children searched and each check is a lookup."""
        return self.mode == "All" and not self.language and bool(self.needle) and self.matches is not None

    def hasChildren(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> bool:  # noqa: B008
        """Whether a row gets an expander: during a search, from the answer (Qt would
        otherwise filter every paragraph of every chapter the tree lays out)."""
        if parent.isValid() and self._search_only():
            source = self.mapToSource(parent)
            key = self.sourceModel().row_key(source.row(), source.parent())  # type: ignore[attr-defined]
            return key in self.matches.above  # type: ignore[union-attr]
        return super().hasChildren(parent)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        if self.mode == "All" and not self.needle and not self.language:
            return True
        model = self.sourceModel()
        if self._search_only():
            return model.row_key(row, parent) in self.matches.shown  # type: ignore[attr-defined, union-attr]
        idx = model.index(row, 0, parent)
        node = model.node(idx)  # type: ignore[attr-defined]
        if node is None:
            return False
        if self.language or self.mode == "No voice":
            para = node if isinstance(node, ParagraphNode) else (
                model._para_of(node) if isinstance(node, SentenceNode) else None)  # type: ignore[attr-defined]
            if para is None:  # a chapter shows when one of its paragraphs does
                return False
            if self.language and para.effective_language != self.language:
                return False
            if self.mode == "No voice" and not para.unvoiced:
                return False
        if self.needle and self.matches is not None and _row_key(node) not in self.matches.rows:
            return False
        if self.mode == "Flagged":
            return bool(model.flag_words(node)) and not (isinstance(node, ChapterNode) and not node.too_long)  # type: ignore[attr-defined]
        state = idx.data(StateRole)
        if self.mode == "Not rendered":
            return isinstance(node, SentenceNode) and state != "done"
        if self.mode == "Failed":
            return isinstance(node, SentenceNode) and state == "failed"
        if self.mode == "Needs listening":
            return isinstance(node, SentenceNode) and node.id in model.to_review  # type: ignore[attr-defined]
        return True


def _row_key(node: ChapterNode | ParagraphNode | SentenceNode) -> RowKey:
    if isinstance(node, SentenceNode):
        return ("s", node.id)
    if isinstance(node, ParagraphNode):
        return ("p", node.chapter, node.index)
    return ("c", node.index)
