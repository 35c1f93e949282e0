"""A project's book audit (:mod:`studio.text.audit`), as the render will speak it.

Why here: the audit of a project must read each sentence as the render gives it to
its voice (the producer's overrides, the lexicon, the voice each language is read by,
the unvoiced policy), and use that voice's own front end for the marks it would name;
the rows and the voices are this layer's. The desktop's audit panel runs it off the GUI
thread; ``studio inspect PROJECT --audit`` reads the same rows.
"""

from __future__ import annotations

from studio.core.errors import VoiceError
from studio.project.store import Project
from studio.rendering.phonemes import voice_phonemes
from studio.text.audit import Audit, audit_sentences
from studio.text.heteronym_check import uncertain_heteronyms
from studio.text.lexicon_report import report_for_sentences
from studio.text.spoken_report import SpokenSentence


def audit_project(project: Project) -> Audit:
    """Every finding of the project's sentences (chapter and index numbered as ``studio inspect --spoken``)."""
    rows = [r for r in project.sentences() if not r.skipped]
    counts: dict[int, int] = {}
    sentences = []
    for r in rows:
        counts[r.chapter] = counts.get(r.chapter, 0) + 1
        sentences.append(SpokenSentence(r.chapter + 1, counts[r.chapter], None if r.paragraph is None else r.paragraph + 1,
                                        r.text, r.spoken or r.text, r.said or r.language))
    voices = {s.language: project.voice_for(s.language) for s in sentences}

    def phonemize(text: str, language: str) -> str:
        """The narrator's voice of that language (the one the render gives the sentence); the
        bundled voice's when that one is not installed here (espeak-ng names the same marks)."""
        try:
            say = voice_phonemes(voices.get(language) or None)
        except VoiceError:
            say = voice_phonemes(None)
        return say(text, language, None)

    report = report_for_sentences([(r.text, r.language) for r in rows if r.paragraph is not None],
                                  project.lexicon.effective())
    return audit_sentences(sentences, project.book_language(), phonemize=phonemize,
                           guessed=[(u.word, u.count, u.first_sentence) for u in report.suggestions],
                           heteronyms=uncertain_heteronyms)
