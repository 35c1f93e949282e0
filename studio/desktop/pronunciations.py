"""The Pronunciations dialog's project work: what it shows, and its edits, off the GUI thread.

Why apart from the dialog: counting how often each word occurs reads every
sentence of the book, and an edit re-keys every sentence holding the word; both
read and write the project database, which no widget may do. The dialog hands
these functions to the session's task runner and shows the :class:`LexiconView`
that comes back (no Qt here).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from studio.core.errors import VoiceError
from studio.core.lexicon import LexiconEntry
from studio.project.store import Project
from studio.project.undo import UndoHistory
from studio.rendering.lexicon_checks import unknown_ipa
from studio.text.lexicon_report import LexiconReport, report_for_sentences


@dataclass(frozen=True)
class LexiconView:
    """What the dialog shows: the project's own entries, the words' uses and the outcome
    of the edit that produced it (``message``; empty after a plain read)."""

    entries: tuple[LexiconEntry, ...]
    report: LexiconReport
    book_language: str
    message: str = ""
    render_again: tuple[int, ...] = ()  # rendered sentences the edit changed: the dialog queues them


def lexicon_view(project: Project, message: str = "") -> LexiconView:
    """The entries and how often each word (and each word worth an entry) occurs."""
    rows = [(r.text, r.language) for r in project.sentences() if r.paragraph is not None]
    report = report_for_sentences(rows, project.lexicon.effective())
    return LexiconView(tuple(project.lexicon.entries().entries), report, project.book_language(), message)


def _changed_by(project: Project, change: Callable[[], str]) -> LexiconView:
    """Make ``change`` (it says what it did); the rendered sentences whose rendition it changed
    are to be queued (what the message says will render again is what is queued)."""
    before = {r.id: r.expected_key for r in project.sentences()}
    with UndoHistory(project.db).step("change a pronunciation"):  # Edit > Undo takes it back
        done = change()
    moved = [r for r in project.sentences() if before.get(r.id) != r.expected_key]
    again = tuple(r.id for r in moved if r.cache_key)  # they have audio with the old pronunciation
    later = len(moved) - len(again)
    parts = [f"{len(again)} sentence{'s' if len(again) != 1 else ''} queued to render again"] if again else []
    if later:
        parts.append(f"{later} not rendered yet will use it")
    return replace(lexicon_view(project, f"{done}; {'; '.join(parts) or 'no sentence changes'}."), render_again=again)


def save_entry(project: Project, entry: LexiconEntry) -> LexiconView:
    """Add or replace ``entry``; VoiceError (nothing stored) for IPA its voice cannot say."""
    voice, unknown = unknown_ipa(project, entry)
    if unknown:
        raise VoiceError(f"the voice {voice} has no phoneme for {' '.join(unknown)}")

    def add() -> str:
        project.lexicon.add([entry])
        return f"{entry.grapheme}: saved"
    return _changed_by(project, add)


def remove_entry(project: Project, grapheme: str, language: str | None) -> LexiconView:
    """Remove the entries for ``grapheme`` (ProjectError when there is none)."""
    def remove() -> str:
        n = project.lexicon.remove(grapheme, language=language)
        return f"removed {n} entr{'y' if n == 1 else 'ies'} for {grapheme}"
    return _changed_by(project, remove)
