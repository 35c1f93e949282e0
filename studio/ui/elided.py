"""Labels that give up width: a one-line banner and status texts elided to the room they get.

Why: a QLabel's minimum width is its whole text, so one long warning ("11 long chapters ·
2 passages without a voice · ...") used to set the main window's minimum width past a
laptop screen. These labels show what fits, end in "…", and keep the whole text in the
tooltip (and, for the banner, behind its "Show" link).
"""

from __future__ import annotations

import re
from html import escape, unescape

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

#: the narrowest a label asks for, in average characters
MIN_CHARS = 12


class ElidedLabel(QLabel):
    """Plain text on one line, elided at the right to the label's width; the whole text in the tooltip.

    ``link`` (optional) is a rich-text tail that is always shown whole, e.g. ``<a href="show">Show</a>``.
    """

    def __init__(self, text: str = "", link: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full_text = ""
        self.shown = ""  # what fits of ``full_text``
        self.link = link
        self.extra_tip = ""
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.set_full_text(text)

    def set_full_text(self, text: str, tip: str = "") -> None:
        """The whole line (and more for the tooltip under it); shown elided to the width."""
        self.full_text = " ".join(text.split())
        self.extra_tip = tip
        self.setToolTip("\n\n".join(t for t in (self.full_text, tip) if t))
        self._elide()
        self.updateGeometry()

    def _tail(self) -> str:
        return f" \u2014 {self.link}" if self.link and self.full_text else ""

    def _tail_width(self) -> int:
        """The links' room: their words as shown (tags and entities aside), and the ellipsis."""
        if not self._tail():
            return 0
        words = unescape(re.sub(r"<[^>]+>", "", self._tail()))
        return self.fontMetrics().horizontalAdvance(words + "\u2026") + 4

    def _elide(self) -> None:
        fm = self.fontMetrics()
        room = max(fm.averageCharWidth() * 4, self.contentsRect().width() - self._tail_width())
        self.shown = fm.elidedText(self.full_text, Qt.TextElideMode.ElideRight, room)
        self.setText(escape(self.shown, quote=False) + self._tail())

    def elided(self) -> bool:
        """Whether the line gave up width (a quoted passage's own "…" in the text is no sign of it)."""
        return self.full_text != "" and self.shown != self.full_text

    def sizeHint(self) -> QSize:
        fm = self.fontMetrics()
        m = self.contentsMargins()
        return QSize(fm.horizontalAdvance(self.full_text) + self._tail_width() + m.left() + m.right() + 2,
                     fm.height() + m.top() + m.bottom())

    def minimumSizeHint(self) -> QSize:
        fm = self.fontMetrics()
        m = self.contentsMargins()
        return QSize(fm.averageCharWidth() * MIN_CHARS + self._tail_width() + m.left() + m.right(),
                     fm.height() + m.top() + m.bottom())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()
