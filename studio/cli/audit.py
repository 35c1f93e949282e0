"""``studio inspect BOOK --audit``: the producer's one look before rendering.

Why its own module: the audit (:mod:`studio.text.audit`) needs the voice's front end
(the render's own) for the symbols it would name, and the lexicon report for the words
it would guess; this puts them together and prints the findings by kind, with their
sentences, or as JSON (``--json``).
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from studio.cli.common import print_table
from studio.core.lexicon import Lexicon


def print_audit(args: argparse.Namespace, book, out: TextIO, own: Lexicon = Lexicon()) -> int:  # book: Book
    """Prints the audit; returns 0 (an audit with findings is not a failure: it is a list to listen to)."""
    from studio.project.store import Project
    from studio.rendering.book_audit import audit_project
    from studio.text.audit import KINDS

    if Project.is_project(args.file):
        with Project.open(args.file) as project:
            report = audit_project(project)
    else:
        report = _manuscript_audit(args, book, own)
    if args.json:
        json.dump({"book_language": report.book_language, "sentences": report.sentences, "words": report.words,
                   "counts": report.counts(), "findings": [f.as_dict() for f in report.findings]},
                  out, ensure_ascii=False, indent=1)
        out.write("\n")
        return 0
    out.write(f"audit of {book.title or args.file.name}: {report.sentences} sentences, {report.words} words, "
              f"book language {report.book_language}\n")
    if silent := report.silent_counts():
        out.write("left out of the audio: " + ", ".join(f"{what} {n}" for what, n in silent.items()) + "\n")
    n = max(0, args.words)
    for kind, meaning in KINDS.items():
        found = report.of_kind(kind)
        out.write(f"\n{kind}: {len(found)} ({meaning})\n")
        if found:
            rows = [("CH", "#", "WHAT", "SENTENCE")]
            rows += [(str(f.chapter), str(f.index), f.detail, _short(f.text)) for f in found[:n]]
            print_table(rows, out)
            if len(found) > n:
                out.write(f"  ... and {len(found) - n} more (--words N lists more, --json all)\n")
    return 0


def _manuscript_audit(args: argparse.Namespace, book, own: Lexicon):  # -> studio.text.audit.Audit
    """A manuscript's audit, as a new project with the defaults (or ``--notes`` & co.) would read it."""
    from studio.cli.content import content_changes
    from studio.cli.spoken import manuscript_lexicon, voiced_sentences
    from studio.text.content import DEFAULTS, silent_kinds, what_is_silent
    from studio.rendering.phonemes import voice_phonemes
    from studio.text.audit import audit_sentences
    from studio.text.heteronym_check import uncertain_heteronyms
    from studio.text.lexicon_report import report_for_sentences

    quiet = silent_kinds(**{**DEFAULTS, **content_changes(args)})
    every = voiced_sentences(args, book, own, phonemes=False)
    sentences = [s for s in every if s.kind not in quiet]
    lexicon = manuscript_lexicon(args, own)
    say = voice_phonemes(None)  # lexicon entries splice their own phonemes: only espeak-ng names marks
    report = report_for_sentences([(s.text, s.language) for s in sentences if s.paragraph is not None], lexicon)
    return audit_sentences(sentences, book.language, phonemize=lambda text, language: say(text, language, None),
                           guessed=[(u.word, u.count, u.first_sentence) for u in report.suggestions],
                           heteronyms=uncertain_heteronyms, known=lambda word: bool(lexicon.find(word, "en")),
                           silent=[(s, what_is_silent(s.kind)) for s in every if s.kind in quiet])


def _short(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "\u2026"
