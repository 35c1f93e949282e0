"""The Pronunciations dialog's project work: what it shows, and its edits, off the GUI thread.

Why apart from the dialog: counting how often each word occurs reads every
sentence of the book, and an edit re-keys every sentence holding the word; both
read and write the project database, which no widget may do. The dialog hands
these functions to the session's task runner and shows the :class:`LexiconView`
that comes back (no Qt here).
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.core.errors import VoiceError
from studio.core.lexicon import LexiconEntry
from studio.project.store import Project
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


def lexicon_view(project: Project, message: str = "") -> LexiconView:
    """The entries and how often each word (and each word worth an entry) occurs."""
    rows = [(r.text, r.language) for r in project.sentences() if r.paragraph is not None]
    report = report_for_sentences(rows, project.lexicon.effective())
    return LexiconView(tuple(project.lexicon.entries().entries), report, project.book_language(), message)


def save_entry(project: Project, entry: LexiconEntry) -> LexiconView:
    """Add or replace ``entry``; VoiceError (nothing stored) for IPA its voice cannot say."""
    voice, unknown = unknown_ipa(project, entry)
    if unknown:
        raise VoiceError(f"the voice {voice} has no phoneme for {' '.join(unknown)}")
    before = {i: r.key for i, r in project.renditions().items()}
    project.lexicon.add([entry])
    n = sum(1 for i, r in project.renditions().items() if before.get(i) != r.key)
    return lexicon_view(project, f"{entry.grapheme}: saved; {n} sentence(s) will render again.")


def remove_entry(project: Project, grapheme: str, language: str | None) -> LexiconView:
    """Remove the entries for ``grapheme`` (ProjectError when there is none)."""
    n = project.lexicon.remove(grapheme, language=language)
    return lexicon_view(project, f"removed {n} entr{'y' if n == 1 else 'ies'} for {grapheme}.")
