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
    from studio.cli.spoken import manuscript_lexicon, voiced_sentences
    from studio.rendering.phonemes import voice_phonemes
    from studio.text.audit import KINDS, audit_sentences
    from studio.text.heteronym_check import uncertain_heteronyms
    from studio.text.lexicon_report import lexicon_report

    sentences = voiced_sentences(args, book, own, phonemes=False)
    lexicon = manuscript_lexicon(args, own)
    say = voice_phonemes(None)  # lexicon entries splice their own phonemes: only espeak-ng names marks
    guessed = [(u.word, u.count, u.first_sentence) for u in lexicon_report(book, lexicon).suggestions]
    report = audit_sentences(sentences, book.language, phonemize=lambda text, language: say(text, language, None),
                             guessed=guessed, heteronyms=uncertain_heteronyms)
    if args.json:
        json.dump({"book_language": report.book_language, "sentences": report.sentences, "words": report.words,
                   "counts": report.counts(), "findings": [f.as_dict() for f in report.findings]},
                  out, ensure_ascii=False, indent=1)
        out.write("\n")
        return 0
    out.write(f"audit of {book.title or args.file.name}: {report.sentences} sentences, {report.words} words, "
              f"book language {report.book_language}\n")
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


def _short(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "\u2026"
