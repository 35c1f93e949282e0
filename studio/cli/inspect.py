"""``studio inspect``: a manuscript's chapters, durations, languages and flags, and
its pronunciations: words a lexicon entry decides (the book's own PLS/SSML, the
user's lexicon, ``--project``'s) and words the voice will likely guess."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from studio.cli.common import format_duration, print_table, require_file
from studio.cli.content import add_arguments as add_content_arguments


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "inspect", help="show a manuscript's chapters and problems",
        description="Import a manuscript and report chapters, word counts, estimated "
        "durations, languages and anything to look at before rendering.",
    )
    p.add_argument("file", type=Path, help="manuscript (.txt, .md, .docx, .epub, ...) or a project folder "
                   "(its chapters as the producer merged, split, named and included them)")
    p.add_argument("--long-chapter-minutes", type=float, default=60.0, metavar="MIN",
                   help="flag chapters longer than this when spoken (default: 60)")
    p.add_argument("--words-per-minute", type=float, default=None, metavar="WPM",
                   help="estimate durations at this flat rate instead of the voice's measured speaking "
                   "rate and the pauses (the estimate the app and export use)")
    p.add_argument("--max-sentence-chars", type=int, default=500, metavar="N",
                   help="split sentences longer than this (default: 500)")
    p.add_argument("--project", type=Path, help="also use this project's lexicon entries")
    p.add_argument("--words", type=int, default=25, metavar="N",
                   help="list at most N words with entries and N suggestions (default: 25)")
    p.add_argument("--spoken", action="store_true",
                   help="list the sentences whose spoken form (numbers, dates, abbreviations... as the voice "
                   "will say them) differs from the print")
    p.add_argument("--audit", action="store_true",
                   help="list, by kind and with their sentences, everything the voice would say other than as a "
                   "narrator reads it: symbols it would name, words it would spell, sentences in another language's "
                   "rules, words it can only guess, uncertain heteronyms")
    p.add_argument("--json", action="store_true",
                   help="with --spoken: write every sentence as a JSON object (chapter, index, paragraph, "
                   "text, spoken, language, phonemes: what the voice is given) instead of the report; "
                   "with --audit: the findings")
    group = p.add_argument_group("notes, images, tables and code",
                                 "what --audit takes as left out of a manuscript (a project: its own choices)")
    add_content_arguments(group, stored=False)
    p.set_defaults(func=_cmd_inspect)


def _cmd_inspect(args: argparse.Namespace) -> int:
    from studio.engine.voice.catalog import list_voices
    from studio.project.store import Project
    from studio.core.lexicon import Lexicon
    from studio.text.importer import read_manuscript
    from studio.text.inspect import inspect_book

    from studio.engine.voice.catalog import get_voice
    from studio.project.duration import book_estimates, chapter_estimates

    chapters = durations = None
    own = Lexicon()  # the manuscript's own pronunciations (an EPUB's), read with its text
    rate = f"{args.words_per_minute:g} words per minute" if args.words_per_minute else ""
    if Project.is_project(args.file):
        with Project.open(args.file) as project:
            book, chapters = project.book(), project.chapters()
            if not rate:  # the tree's and the export dialog's estimate: rendered audio where there is some
                durations, rate = chapter_estimates(project), f"voice {project.settings().voice_id}'s rate, with pauses"
    else:
        require_file(args.file)
        read = read_manuscript(args.file, max_sentence_chars=args.max_sentence_chars)
        book, own = read.book, read.lexicon
        if not rate and not args.spoken and not args.audit:
            voice = get_voice(None).id
            durations, rate = book_estimates(book, voice), f"voice {voice}'s measured rate, with pauses"
    if args.audit:
        from studio.cli.audit import print_audit

        return print_audit(args, book, sys.stdout, own)
    if args.spoken:
        from studio.cli.spoken import print_spoken

        return print_spoken(args, book, sys.stdout, own)
    voice_languages = {lang for v in list_voices() for lang in v.abilities.languages or (v.language,)}
    report = inspect_book(
        book, words_per_minute=args.words_per_minute or 155.0, durations=durations,
        long_chapter_minutes=args.long_chapter_minutes, voice_languages=voice_languages,
    )
    _print_report(report, sys.stdout, book, chapters, rate)
    _print_pronunciations(args, book, own, sys.stdout)
    return 0


def _print_pronunciations(args: argparse.Namespace, book, own, out: TextIO) -> None:  # Book, Lexicon
    from studio.cli.spoken import manuscript_lexicon
    from studio.text.lexicon_report import lexicon_report

    report = lexicon_report(book, manuscript_lexicon(args, own))
    n = max(0, args.words)
    if report.with_entries:
        out.write(f"\nwords with lexicon entries ({len(report.with_entries)}):\n")
        rows = [("WORD", "SAYS", "COUNT", "FIRST SENTENCE")]
        rows += [(u.word, u.entry.value if u.entry else "", str(u.count), _short(u.first_sentence))
                 for u in report.with_entries[:n]]
        print_table(rows, out)
    if report.suggestions:
        out.write(f"\nwords the voice will likely guess ({len(report.suggestions)}; "
                  "`studio lexicon add` fixes one that sounds wrong):\n")
        rows = [("WORD", "COUNT", "FIRST SENTENCE")]
        rows += [(u.word, str(u.count), _short(u.first_sentence)) for u in report.suggestions[:n]]
        print_table(rows, out)


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _print_report(report, out: TextIO, book, chapters=None, rate: str = "") -> None:
    """``report``: studio.text.inspect.BookReport of ``book``; ``chapters``: a project's
    ChapterInfo list, whose names and inclusion win over the import's."""
    from studio.project.duration import book_seconds
    from studio.project.front_matter import included_by_default

    out.write(f"{report.title} -- {report.author or 'unknown author'} (main language: {report.language})\n\n")
    rows = [("#", "CHAPTER", "WORDS", "DURATION", "LANGUAGES", "FLAGS")]
    for c in report.chapters:
        flags, title = [], c.title
        reason = book.chapters[c.index].front_reason
        if chapters is not None:
            title = chapters[c.index].name
            if not chapters[c.index].included:
                flags.append(f"excluded{f' ({reason})' if reason else ''}")
        elif c.front_matter:
            flags.append(f"front matter{f': {reason}' if reason else ''} (skipped unless chosen)")
        if c.too_long:
            flags.append("LONG")
        if c.split_sentences:
            flags.append(f"{len(c.split_sentences)} split sentence(s)")
        if c.unvoiced:
            flags.append(f"{len(c.unvoiced)} passage(s) without a voice")
        title = title if len(title) <= 40 else title[:39] + "\u2026"
        rows.append((str(c.index + 1), title, str(c.word_count), format_duration(c.duration_seconds),
                     ", ".join(c.languages) or "-", "; ".join(flags)))
    print_table(rows, out)
    reads = [chapters[c.index].included if chapters is not None else
             included_by_default(c.front_matter, c.title, book.chapters[c.index].front_reason, False)
             for c in report.chapters]
    # the book's one length (the Render Book question's, the tree's chapters added): the chapters it reads
    length = book_seconds((c.duration_seconds, r) for c, r in zip(report.chapters, reads))
    every = "" if all(reads) else f" ({format_duration(report.duration_seconds)} with every chapter)"
    out.write(
        f"\n{len(report.chapters)} chapter(s), {report.word_count} words, the book about "
        f"{format_duration(length)}{every} at {rate or f'{report.words_per_minute:g} words per minute'}; "
        f"languages: {', '.join(report.languages) or '-'}\n"
    )
    warnings = report.warnings()
    if warnings:
        out.write("\nto check before rendering:\n")
        out.writelines(f"  - {line}\n" for line in warnings)
        out.writelines(f"    split: chapter {s.chapter_index + 1}, paragraph {s.paragraph_index + 1}: {s.preview}\n" for s in (s for c in report.chapters for s in c.split_sentences))
        out.writelines(f"    no '{p.language}' voice: chapter {p.chapter_index + 1}, "
                      f"paragraph {p.paragraph_index + 1}: {p.preview}\n" for p in report.unvoiced)
