"""The one question asked before a whole-book render.

Why ask: "Render Book" on a long book queues thousands of sentences and hours of
synthesis, and leaves some chapters out (front matter). One look at the count,
the time and the chapters left out avoids finding that out hours later.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from studio.core.words import counted
from studio.desktop.planning import BookPlan
from studio.ui.common import fmt_eta

#: chapters named in the question at most (the rest are counted)
NAMED = 8


def book_render_text(plan: BookPlan) -> tuple[str, str]:
    """``(question, details)`` in plain words."""
    head = (f"Render {plan.to_render:,} of {plan.sentences:,} sentences in {counted(plan.chapters, 'chapter')}"
            f" (the book runs about {fmt_eta(plan.audio_s)})?")
    if plan.estimated_s is not None:
        time = f"Estimated time: about {fmt_eta(plan.estimated_s)} ({plan.basis})."
    else:
        time = "Estimated time: not known yet (render a chapter or measure the presets first)."
    if plan.excluded:
        names = ", ".join(f"\u201c{t}\u201d" for t in plan.excluded[:NAMED])
        more = f" and {len(plan.excluded) - NAMED} more" if len(plan.excluded) > NAMED else ""
        left_out = f"Left out: {names}{more}. Right-click a chapter to include it."
    else:
        left_out = "No chapter is left out."
    return head, f"{time}\n{left_out}"


def book_render_box(parent: QWidget, plan: BookPlan) -> QMessageBox:
    """A window-modal question (opened with ``open()``, so the event loop keeps running)."""
    head, detail = book_render_text(plan)
    box = QMessageBox(QMessageBox.Icon.Question, "Render the whole book", head,
                      QMessageBox.StandardButton.Cancel, parent)
    box.setInformativeText(detail)
    box.addButton("Render Book", QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box
