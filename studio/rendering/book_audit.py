"""A project's book audit (:mod:`studio.text.audit`), as the render will speak it.

Why here: the audit of a project must read each sentence as the render gives it to
its voice (the producer's overrides, the lexicon, the voice each language is read by,
the unvoiced policy), and use that voice's own front end for the marks it would name;
the rows and the voices are this layer's. The desktop's audit panel runs it off the GUI
thread; ``studio inspect PROJECT --audit`` reads the same rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from studio.core.errors import VoiceError
from studio.core.lexicon import LexiconEntry
from studio.text.content import what_is_silent
from studio.project.store import Project
from studio.project.undo import UndoHistory
from studio.rendering.phonemes import voice_phonemes
from studio.text.audit import Audit, audit_sentences
from studio.text.heteronym_check import uncertain_heteronyms
from studio.text.lexicon_report import report_for_sentences
from studio.text.normalize.capitals import spell
from studio.text.spoken_report import SpokenSentence

#: ``progress(done, total)``, called as the audit reads the sentences; raising
#: :class:`~studio.core.errors.Cancelled` from it stops the audit
AuditProgress = Callable[[int, int], None]


def audit_project(project: Project, progress: AuditProgress | None = None) -> Audit:
    """Every finding of the project's sentences (chapter and index numbered as ``studio inspect --spoken``);
    the sentences left silent are listed with why (a kind the project does not read, or no voice)."""
    every = project.sentences()
    silent = []
    counts: dict[int, int] = {}
    sentences = []
    for r in every:
        counts[r.chapter] = counts.get(r.chapter, 0) + 1
        said = SpokenSentence(r.chapter + 1, counts[r.chapter], None if r.paragraph is None else r.paragraph + 1,
                              r.text, r.spoken or r.text, r.said or r.language, kind=r.kind)
        if r.skipped:
            silent.append((said, what_is_silent(r.kind) if r.kind else f"no {r.language} voice"))
        else:
            sentences.append(said)
    rows = [r for r in every if not r.skipped]
    voices = {s.language: project.voice_for(s.language) for s in sentences}

    def phonemize(text: str, language: str) -> str:
        """The narrator's voice of that language (the one the render gives the sentence); the
        bundled voice's when that one is not installed here (espeak-ng names the same marks)."""
        try:
            say = voice_phonemes(voices.get(language) or None)
        except VoiceError:
            say = voice_phonemes(None)
        return say(text, language, None)

    lexicon = project.lexicon.effective()
    report = report_for_sentences([(r.text, r.language) for r in rows if r.paragraph is not None], lexicon)
    return audit_sentences(sentences, project.book_language(), phonemize=phonemize,
                           guessed=[(u.word, u.count, u.first_sentence) for u in report.suggestions],
                           heteronyms=uncertain_heteronyms, silent=silent,
                           known=lambda word: bool(lexicon.find(word, "en")), progress=progress)


def accept_spelled(project: Project, words: Iterable[str]) -> int:
    """Accept words in capitals as spelled (codes an author spells: "Theorem VFSLS"), in one undoable
    step: each gets an English lexicon entry saying it letter by letter, so the audit lists it no more.
    Returns how many entries were added."""
    entries = [LexiconEntry(w, "alias", spell(w), case_sensitive=True, language="en") for w in dict.fromkeys(words)]
    if not entries:
        return 0
    with UndoHistory(project.db).step("accept words spelled letter by letter"):
        return project.lexicon.add(entries)
