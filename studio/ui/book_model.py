"""The book as a Qt item model: chapters > paragraphs > sentences, with states and flags.

Why over a frozen snapshot plus an overlay: the structure comes from a
:class:`~studio.desktop.snapshot.BookSnapshot` built off the GUI thread; render states
change sentence by sentence and arrive as small deltas, which only touch an
overlay (``sentence id -> state``) and repaint the rows concerned. The model
never touches the database.

Index ids encode the node's position (chapter, paragraph, sentence), so
``parent()`` needs no lookup and no Python object is kept alive by Qt.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont

from studio.desktop.messages import StateDelta
from studio.desktop.snapshot import BookSnapshot, ChapterNode, ParagraphNode, SentenceNode, estimate, paragraph_label, with_state
from studio.ui.row_words import flag_words, fmt_duration, row_tooltip

COLUMNS = ("Text", "Language", "State", "Flags", "Length")
TEXT, LANG, STATE, FLAGS, LENGTH = range(5)
FILTERS = ("All", "Flagged", "No voice", "Not rendered", "Failed", "Needs listening")
ANY_LANGUAGE = "Any language"
FlagsRole = Qt.ItemDataRole.UserRole + 1
StateRole = Qt.ItemDataRole.UserRole + 2

_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.ToolTipRole,
                    Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.FontRole,
                    FlagsRole, StateRole})
_STATE_COLORS = {"done": "#2e7d32", "failed": "#c62828", "rendering": "#1565c0", "pending": "#757575"}
_PLAYING = QColor(255, 236, 153)
_BITS = 21


def _key(c: int, p: int = -1, s: int = -1) -> int:
    return ((c + 1) << (2 * _BITS)) | ((p + 1) << _BITS) | (s + 1)


def _unkey(key: int) -> tuple[int, int, int]:
    mask = (1 << _BITS) - 1
    return (key >> (2 * _BITS)) - 1, ((key >> _BITS) & mask) - 1, (key & mask) - 1


class BookModel(QAbstractItemModel):
    """Read-mostly tree; sentence text is editable (the edit goes out as a request)."""

    editRequested = Signal(int, str)  # sentence id, new text

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.snapshot: BookSnapshot | None = None
        self._overlay: dict[int, SentenceNode] = {}
        self._where: dict[int, tuple[int, int, int]] = {}
        self._counts: dict[int, dict[str, int]] = {}
        self._overlaid: set[int] = set()  # chapters with a sentence in the overlay
        self.playing: int | None = None
        self.to_review: frozenset[int] = frozenset()  # proof-listening: sentences flagged, not marked fine
        self.proof_lines: dict[int, str] = {}  # chapter -> "4 to review; 50 of 54 heard and passed"

    # ------------------------------------------------------------ data in

    def set_snapshot(self, snapshot: BookSnapshot | None) -> None:
        self.beginResetModel()
        self.snapshot = snapshot
        self._overlay.clear()
        self._overlaid.clear()
        self._counts.clear()
        self._where = {}
        if snapshot is not None:
            for c in snapshot.chapters:
                self._index_chapter(c)
        self.endResetModel()

    def update_snapshot(self, snapshot: BookSnapshot) -> None:
        """A newer snapshot of the same book: in place when the shape is unchanged.

        Why not a reset: a reset collapses the tree and loses the selection, and a
        new long-chapter threshold or saved settings change flags, not structure.
        The session folds every state delta into its snapshot before the model
        sees the delta, so the snapshot is at least as new as the overlay, which
        can be dropped.
        """
        old = self.snapshot
        if old is not None and old.folder == snapshot.folder and _shape(old) != _shape(snapshot) \
                and _ids(old) == _ids(snapshot):
            self._regroup(old, snapshot)
            return
        if old is None or old.folder != snapshot.folder or _shape(old) != _shape(snapshot):
            self.set_snapshot(snapshot)
            return
        self.layoutAboutToBeChanged.emit()
        self.snapshot = snapshot
        self._overlay.clear()
        self._overlaid.clear()
        self._counts.clear()
        self.layoutChanged.emit()

    def _regroup(self, old: BookSnapshot, new: BookSnapshot) -> None:
        """The same sentences in other chapters (a merge or a split): rows move in place.

        Why a layout change and not a reset: expanded chapters and the selection
        stay where the producer left them. Every persistent index is carried to
        where its sentence (a paragraph's or chapter's first sentence) is now; an
        empty chapter or paragraph has none, and its index goes.
        """
        self.layoutAboutToBeChanged.emit()
        where = {s.id: (ci, pi, si) for ci, c in enumerate(new.chapters)
                 for pi, p in enumerate(c.paragraphs) for si, s in enumerate(p.sentences)}
        before = self.persistentIndexList()
        after = []
        for idx in before:
            c, p, s = _unkey(idx.internalId())
            chapter = old.chapters[c] if c < len(old.chapters) else None
            nodes = chapter.paragraphs[p].sentences[s:s + 1] if chapter and p >= 0 and s >= 0 else \
                chapter.paragraphs[p].sentences if chapter and p >= 0 else chapter.sentences if chapter else ()
            to = where.get(nodes[0].id) if nodes else None
            if to is None:
                after.append(QModelIndex())
                continue
            depth = (to[0],) if p < 0 else (to[0], to[1]) if s < 0 else to
            row = depth[-1] if len(depth) > 1 else to[0]
            after.append(self.createIndex(row, idx.column(), _key(*depth)))
        self.snapshot = new
        self._overlay.clear()
        self._overlaid.clear()
        self._counts.clear()
        self._where = {}
        for chapter in new.chapters:
            self._index_chapter(chapter)
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def replace_chapter(self, node: ChapterNode) -> None:
        """A rebuilt chapter (after an override or an edit): same shape, new content."""
        snap = self.snapshot
        if snap is None or node.index >= len(snap.chapters):
            return
        old = snap.chapters[node.index]
        if [len(p.sentences) for p in old.paragraphs] != [len(p.sentences) for p in node.paragraphs]:
            self.set_snapshot(replace(snap, chapters=tuple(node if c.index == node.index else c for c in snap.chapters)))
            return
        self.snapshot = replace(snap, chapters=tuple(node if c.index == node.index else c for c in snap.chapters))
        shown = [[self.sentence(s.id) for s in p.sentences] for p in old.paragraphs]  # overlay included
        for s in node.sentences:
            self._overlay.pop(s.id, None)
        self._index_chapter(node)
        top = self.index(node.index, 0)
        self.dataChanged.emit(top, self.index(node.index, len(COLUMNS) - 1))
        for pi, para in enumerate(node.paragraphs):  # only the paragraphs that changed: each signal costs the
            before = old.paragraphs[pi]                # filter and the tree a pass (an edit changes one)
            if para == before and list(para.sentences) == shown[pi]:
                continue
            pidx = self.index(pi, 0, top)
            self.dataChanged.emit(pidx, self.index(pi, len(COLUMNS) - 1, top))
            if para.sentences:
                self.dataChanged.emit(self.index(0, 0, pidx), self.index(len(para.sentences) - 1, len(COLUMNS) - 1, pidx))

    def apply_delta(self, delta: StateDelta) -> None:
        chapters: set[int] = set()
        for ch in delta.changes:
            where = self._where.get(ch.sentence_id)
            if where is None:
                continue
            node = self.sentence(ch.sentence_id)
            if node is None:
                continue
            new = replace(node, state=ch.state, reason=ch.reason) if ch.state == "rendering" else with_state(node, ch)
            self._overlay[ch.sentence_id] = new
            self._overlaid.add(where[0])
            chapters.add(where[0])
            idx = self._sentence_index(where)
            self.dataChanged.emit(idx, idx.siblingAtColumn(len(COLUMNS) - 1))
        self._estimate(chapters)
        for c in chapters:
            self._counts.pop(c, None)
            top = self.index(c, 0)
            self.dataChanged.emit(top, top.siblingAtColumn(len(COLUMNS) - 1))
            for pi in {self._where[i][1] for i in (ch.sentence_id for ch in delta.changes) if self._where.get(i, (-1,))[0] == c}:
                pidx = self.index(pi, 0, top)
                self.dataChanged.emit(pidx, pidx.siblingAtColumn(len(COLUMNS) - 1))

    def _estimate(self, chapters: set[int]) -> None:
        """Chapters' lengths after render states changed: rendered sentences now count
        at their real length (the inspector and the Length column read these nodes)."""
        snap = self.snapshot
        if snap is None or not chapters:
            return
        nodes = list(snap.chapters)
        for c in chapters:
            node = nodes[c]
            nodes[c] = replace(node, estimated_s=estimate(node, snap.timing, [self.sentence(s.id) for s in node.sentences]))
        self.snapshot = replace(snap, chapters=tuple(nodes))

    def set_playing(self, sentence_id: int | None) -> QModelIndex:
        """Highlight the sentence being heard; returns its index (invalid if none)."""
        old, self.playing = self.playing, sentence_id
        for sid in (old, sentence_id):
            where = self._where.get(sid) if sid is not None else None
            if where is not None:
                idx = self._sentence_index(where)
                self.dataChanged.emit(idx, idx.siblingAtColumn(len(COLUMNS) - 1))
        where = self._where.get(sentence_id) if sentence_id is not None else None
        return self._sentence_index(where) if where else QModelIndex()

    # ------------------------------------------------------------ lookups

    def sentence(self, sentence_id: int) -> SentenceNode | None:
        if sentence_id in self._overlay:
            return self._overlay[sentence_id]
        where = self._where.get(sentence_id)
        if where is None or self.snapshot is None:
            return None
        c, p, s = where
        return self.snapshot.chapters[c].paragraphs[p].sentences[s]

    def row_key(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> tuple:
        """The search key (:data:`studio.desktop.search.RowKey`) of a row, from its position only."""
        if not parent.isValid():
            return ("c", row)
        c, p, _s = _unkey(parent.internalId())
        chapter = self.snapshot.chapters[c]  # type: ignore[union-attr]
        if p < 0:
            return ("p", c, chapter.paragraphs[row].index)
        return ("s", chapter.paragraphs[p].sentences[row].id)

    def node(self, index: QModelIndex) -> ChapterNode | ParagraphNode | SentenceNode | None:
        if not index.isValid() or self.snapshot is None:
            return None
        c, p, s = _unkey(index.internalId())
        chapter = self.snapshot.chapters[c]
        if p < 0:
            return chapter
        para = chapter.paragraphs[p]
        if s < 0:
            return para
        return self.sentence(para.sentences[s].id)

    def sentences_under(self, index: QModelIndex) -> list[SentenceNode]:
        """Current sentence nodes of an item (a chapter's or paragraph's, or the sentence)."""
        node = self.node(index)
        if node is None:
            return []
        if isinstance(node, SentenceNode):
            return [node]
        ids = [s.id for s in (node.sentences if isinstance(node, ChapterNode) else node.sentences)]
        return [self.sentence(i) for i in ids]  # type: ignore[misc]

    def sentence_index(self, sentence_id: int) -> QModelIndex:
        where = self._where.get(sentence_id)
        return self._sentence_index(where) if where else QModelIndex()

    def counts(self, chapter: int) -> dict[str, int]:
        if chapter not in self._counts and self.snapshot is not None:
            node = self.snapshot.chapters[chapter]
            out = {"pending": 0, "rendering": 0, "done": 0, "failed": 0}
            if chapter not in self._overlaid:  # as the node was made: counted off the GUI thread
                out.update(node.state_counts)
            else:
                for s in node.sentences:
                    state = self._overlay.get(s.id, s).state
                    out[state] = out.get(state, 0) + 1
            self._counts[chapter] = out
        return self._counts.get(chapter, {})

    # ------------------------------------------------------------ Qt model API

    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:
        if self.snapshot is None or row < 0 or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, _key(row)) if row < len(self.snapshot.chapters) else QModelIndex()
        c, p, s = _unkey(parent.internalId())
        if s >= 0:
            return QModelIndex()
        chapter = self.snapshot.chapters[c]
        if p < 0:
            return self.createIndex(row, column, _key(c, row)) if row < len(chapter.paragraphs) else QModelIndex()
        para = chapter.paragraphs[p]
        return self.createIndex(row, column, _key(c, p, row)) if row < len(para.sentences) else QModelIndex()

    def parent(self, index: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        c, p, s = _unkey(index.internalId())
        if p < 0:
            return QModelIndex()
        if s < 0:
            return self.createIndex(c, 0, _key(c))
        return self.createIndex(p, 0, _key(c, p))

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        if self.snapshot is None:
            return 0
        if not parent.isValid():
            return len(self.snapshot.chapters)
        if parent.column() > 0:
            return 0
        c, p, s = _unkey(parent.internalId())
        if s >= 0:
            return 0
        chapter = self.snapshot.chapters[c]
        return len(chapter.paragraphs) if p < 0 else len(chapter.paragraphs[p].sentences)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == TEXT and isinstance(self.node(index), SentenceNode):
            base |= Qt.ItemFlag.ItemIsEditable
        return base

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        node = self.node(index)
        if role != Qt.ItemDataRole.EditRole or not isinstance(node, SentenceNode):
            return False
        text = " ".join(str(value).split())
        if not text or text == node.text:
            return False
        self._overlay[node.id] = replace(node, text=text, state="pending")
        self._overlaid.add(node.chapter)
        self._counts.pop(node.chapter, None)
        self.dataChanged.emit(index, index.siblingAtColumn(len(COLUMNS) - 1))
        self.editRequested.emit(node.id, text)
        return True

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in _ROLES:  # the tree asks for a dozen roles per cell it paints
            return None
        node = self.node(index)
        if node is None:
            return None
        col = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self._display(node, col, role == Qt.ItemDataRole.EditRole)
        if role == Qt.ItemDataRole.ToolTipRole:
            timing = self.snapshot.timing if self.snapshot is not None else None
            return row_tooltip(node, COLUMNS[col], self.flag_words(node), timing.rate.basis if timing else "")
        if role == Qt.ItemDataRole.ForegroundRole and col == STATE:
            state = node.state if isinstance(node, SentenceNode) else self._agg_state(node)
            return QBrush(QColor(_STATE_COLORS.get(state, "#757575")))
        if role == Qt.ItemDataRole.ForegroundRole and col == FLAGS:
            return QBrush(QColor("#b26a00"))
        if role == Qt.ItemDataRole.BackgroundRole and isinstance(node, SentenceNode) and node.id == self.playing:
            return QBrush(_PLAYING)
        if role == Qt.ItemDataRole.FontRole and isinstance(node, ChapterNode):
            font = QFont()
            font.setBold(node.included)
            font.setItalic(not node.included)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and isinstance(node, ChapterNode) and not node.included:
            return QBrush(QColor("#9e9e9e"))
        if role == FlagsRole:
            return self.flag_words(node)
        if role == StateRole:
            return node.state if isinstance(node, SentenceNode) else self._agg_state(node)
        return None

    # ------------------------------------------------------------ presentation

    def flag_words(self, node: ChapterNode | ParagraphNode | SentenceNode) -> list[str]:
        return flag_words(node, self._para_of(node) if isinstance(node, SentenceNode) else None, self.to_review)

    def set_proof(self, to_review: frozenset[int], lines: dict[int, str]) -> None:
        """Proof-listening's verdicts (the Proof dock's view): shown in the Flags and State columns.
        Only the rows whose verdict or chapter line changed are repainted (a layout change made the
        filter and the tree walk the book after every chapter heard)."""
        changed = self.to_review ^ to_review
        chapters = {c for c in set(lines) | set(self.proof_lines) if lines.get(c) != self.proof_lines.get(c)}
        self.to_review, self.proof_lines = to_review, lines
        last = len(COLUMNS) - 1
        rows: set[tuple[int, int, int]] = set()
        for sid in changed:
            where = self._where.get(sid)
            if where is not None:
                c, p, _s = where
                rows |= {where, (c, p, -1)}
                chapters.add(c)
        for c, p, si in sorted(rows, key=lambda w: (w[0], w[1], w[2] >= 0)):  # parents first
            idx = self._sentence_index((c, p, si)) if si >= 0 else self.createIndex(p, 0, _key(c, p))
            self.dataChanged.emit(idx, idx.siblingAtColumn(last))
        for c in sorted(chapters):
            if self.snapshot is not None and c < len(self.snapshot.chapters):
                top = self.index(c, 0)
                self.dataChanged.emit(top, top.siblingAtColumn(last))

    def _para_of(self, node: SentenceNode) -> ParagraphNode | None:
        where = self._where.get(node.id)
        if where is None or self.snapshot is None:
            return None
        return self.snapshot.chapters[where[0]].paragraphs[where[1]]

    def _agg_state(self, node: ChapterNode | ParagraphNode) -> str:
        if isinstance(node, ChapterNode):  # counted once per change, not per paint
            states = [state for state, n in self.counts(node.index).items() if n]
            total = sum(self.counts(node.index).values())
            return "done" if total and states == ["done"] else next(
                (s for s in ("rendering", "failed") if s in states), "pending")
        states = [self.sentence(s.id).state for s in node.sentences]  # type: ignore[union-attr]
        if "rendering" in states:
            return "rendering"
        if "failed" in states:
            return "failed"
        return "done" if states and all(s == "done" for s in states) else "pending"

    def _display(self, node: Any, col: int, edit: bool) -> Any:
        if isinstance(node, ChapterNode):
            if col == TEXT:
                return node.label  # the one number and name (studio.project.numbering), status said
            if col == LANG:
                return ", ".join(sorted(node.languages))
            if col == STATE:
                n = self.counts(node.index)
                total = sum(n.values())
                text = f"{n.get('done', 0)}/{total} rendered"
                text += f", {n['failed']} failed" if n.get("failed") else ""
                return text + (f"; {self.proof_lines[node.index]}" if node.index in self.proof_lines else "")
            if col == FLAGS:
                return ", ".join(self.flag_words(node))
            n = self.counts(node.index)
            exact = 0 < n.get("done", 0) == sum(n.values())
            return ("" if exact else "~") + fmt_duration(node.estimated_s)  # with pauses, as exported
        if isinstance(node, ParagraphNode):
            if col == TEXT:
                text = paragraph_label(node, self.snapshot.chapters[node.chapter].heading_first)  # type: ignore[union-attr]
                return text if len(text) <= 90 else text[:89] + "\u2026"
            if col == LANG:
                if node.override:
                    return f"{node.override} (set by you)"
                if node.index is None or node.confidence < 0.005:
                    return f"{node.language} (inherited)" if node.index is not None else node.language
                return f"{node.language} ({node.confidence:.0%})"
            if col == STATE:
                return self._agg_state(node)
            if col == FLAGS:
                return ", ".join(self.flag_words(node))
            total = sum(self.sentence(s.id).duration or 0.0 for s in node.sentences)  # type: ignore[union-attr]
            return fmt_duration(total) if total else ""
        if col == TEXT:
            return node.text
        if col == LANG:
            return node.language
        if col == STATE:
            return node.state
        if col == FLAGS:
            return ", ".join(self.flag_words(node))
        return f"{node.duration:.1f} s" if node.duration and node.state == "done" else ""

    # ------------------------------------------------------------ internals

    def _index_chapter(self, c: ChapterNode) -> None:
        for pi, para in enumerate(c.paragraphs):
            for si, s in enumerate(para.sentences):
                self._where[s.id] = (c.index, pi, si)
        self._counts.pop(c.index, None)

    def _sentence_index(self, where: tuple[int, int, int]) -> QModelIndex:
        c, p, s = where
        return self.createIndex(s, 0, _key(c, p, s))


def _ids(snapshot: BookSnapshot) -> list[int]:
    return [i for c in snapshot.chapters for p in c.shape for i in p]


def _shape(snapshot: BookSnapshot) -> list[tuple[tuple[int, ...], ...]]:
    """Each chapter's shape, worked out when its node was made: comparing two is one C loop."""
    return [c.shape for c in snapshot.chapters]
