"""``studio details``: the book's title, author, narrator, rights and the recording's copyright,
each with where it came from; set them for the credits and the files' tags (the app's Book Details)."""

from __future__ import annotations

import argparse
from pathlib import Path

#: the details the options set (:data:`studio.delivery.book_details.FIELDS`; not imported here: the
#: command modules import lightly)
FIELDS = ("title", "author", "narrator", "rights", "producer", "recording_year")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "details", help="show or set the book's title, author, narrator, rights and recording copyright",
        description="Show the book's details as the export's credits and tags use them, each with where it "
        "came from (the EPUB, the front matter, the book's copyright page, a default, or set by you); set "
        "any of them with the options below (saved in the project; '' goes back to the book's own).")
    p.add_argument("project", type=Path, help="project folder")
    p.add_argument("--title", help="the book's title")
    p.add_argument("--author", help="the book's author")
    p.add_argument("--narrator", help="the narrator tag and credit (default: 'Synthetic voice (<voice name>)')")
    p.add_argument("--rights", help="the book's rights, e.g. 'public domain' or 'Copyright 2019 by Acme Press' "
                   "(default: what the book says: EPUB dc:rights, front matter, copyright page)")
    p.add_argument("--producer", metavar="NAME", help="the recording's copyright holder: 'Recording copyright "
                   "<year> by NAME' in the closing credits and the copyright tag")
    p.add_argument("--recording-year", metavar="YEAR", help="the recording's copyright year (default: this year)")
    p.set_defaults(func=_cmd_details)


def _cmd_details(args: argparse.Namespace) -> int:
    from studio.delivery.book_details import book_details, save_book_details
    from studio.project.opening import open_project

    changes = {name: getattr(args, name) for name in FIELDS if getattr(args, name) is not None}
    project = open_project(args.project).project
    try:
        details = save_book_details(project, **changes) if changes else book_details(project)
    finally:
        project.close()
    for line in details.lines():
        print(line)
    return 0
