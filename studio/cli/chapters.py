"""``studio chapters PROJECT``: list a project's chapters and change them.

One change per call (include, exclude, reset, rename, merge, split), then the
listing as it is now, so a script or a producer sees what the change did.
Numbers are 1-based as everywhere on the command line; ``--show N`` lists a
chapter's paragraphs with the numbers ``--split N:P`` takes. Merging and
splitting keep every sentence's audio: nothing is rendered again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from studio.cli.common import format_duration, print_table
from studio.core.errors import StudioError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "chapters", help="list, include/exclude, rename, merge and split a project's chapters",
        description="List a project's chapters (what Render Book, export and publish follow) or change one: "
        "the change is stored in the project and kept when it is reopened.",
    )
    p.add_argument("project", type=Path, help="project folder")
    act = p.add_mutually_exclusive_group()
    act.add_argument("--include", type=int, metavar="N", help="include chapter N in the book")
    act.add_argument("--exclude", type=int, metavar="N", help="leave chapter N out of the book")
    act.add_argument("--reset", type=int, metavar="N", help="chapter N back to the import's choice")
    act.add_argument("--rename", nargs=2, metavar=("N", "NAME"), help="name chapter N ('' : the imported title)")
    act.add_argument("--merge", type=int, metavar="N", help="merge chapter N with the next one")
    act.add_argument("--split", metavar="N:P", help="split chapter N before its paragraph P")
    act.add_argument("--show", type=int, metavar="N", help="list chapter N's paragraphs")
    p.set_defaults(func=_cmd_chapters)


def _cmd_chapters(args: argparse.Namespace) -> int:
    from studio.project.store import Project

    with Project.open(args.project) as project:
        control = project.chapter_control
        if args.show is not None:
            _show(project.book(), _index(args.show), sys.stdout)
            return 0
        if args.include is not None or args.exclude is not None:
            control.set_included(_index(args.include or args.exclude), args.include is not None)
        elif args.reset is not None:
            control.set_included(_index(args.reset), None)
        elif args.rename:
            control.rename(_index(args.rename[0]), args.rename[1])
        elif args.merge is not None:
            control.merge_with_next(_index(args.merge))
        elif args.split:
            chapter, _, paragraph = args.split.partition(":")
            control.split(_index(chapter), _index(paragraph))
        _list(project, sys.stdout)
    return 0


def _index(text: object) -> int:
    """A 1-based number as typed -> 0-based; a clear error for anything else."""
    try:
        number = int(str(text))
    except ValueError:
        raise StudioError(f"'{text}' is not a number (chapters and paragraphs count from 1)") from None
    if number < 1:
        raise StudioError(f"{number}: chapters and paragraphs count from 1")
    return number - 1


def _list(project, out: TextIO) -> None:
    rows = [("#", "CHAPTER", "INCLUDED", "SENTENCES", "RENDERED", "DURATION")]
    for c in project.chapters():
        why = f" ({c.reason})" if c.reason and not c.included else ""
        rows.append((str(c.index + 1), c.name, ("yes" if c.included else "no") + why, str(c.sentences),
                     f"{c.done}/{c.sentences}", format_duration(c.duration)))
    print_table(rows, out)


def _show(book, index: int, out: TextIO) -> None:
    if not 0 <= index < len(book.chapters):
        raise StudioError(f"there is no chapter {index + 1} (the book has {len(book.chapters)})")
    chapter = book.chapters[index]
    out.write(f"{index + 1}. {chapter.title}\n")
    for n, para in enumerate(chapter.paragraphs, 1):
        text = para.text if len(para.text) <= 70 else para.text[:69] + "\u2026"
        out.write(f"  {n:>4}  {text}\n")
