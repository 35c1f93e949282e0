"""``studio inspect --spoken [--json]``: what the voice will say for each sentence.

Why its own module: the listing reads a project (its overrides and lexicon decide
the spoken form) or a manuscript (the normaliser and the user's and the book's
lexicons), and prints either a table of the changed sentences or JSON of all.
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from studio.cli.common import print_table
from studio.core.lexicon import Lexicon


def print_spoken(args: argparse.Namespace, book, out: TextIO, own: Lexicon = Lexicon()) -> int:  # book: Book
    """``own``: the manuscript's own pronunciations (an EPUB's, read with its text)."""
    from studio.project.store import Project
    from studio.text.spoken_report import SpokenSentence, book_sentences, changed_only

    if Project.is_project(args.file):
        with Project.open(args.file) as project:
            sentences = _project_sentences(project, SpokenSentence)
    else:
        sentences = book_sentences(book, manuscript_lexicon(args, own))
    if args.json:
        json.dump([s.as_dict() for s in sentences], out, ensure_ascii=False, indent=1)
        out.write("\n")
        return 0
    changed = changed_only(sentences)
    out.write(f"{len(changed)} of {len(sentences)} sentence(s) are spoken differently from the print:\n")
    if changed:
        rows = [("CH", "#", "PRINTED", "SPOKEN")]
        rows += [(str(s.chapter), str(s.index), s.text, s.spoken) for s in changed]
        print_table(rows, out)
    return 0


def manuscript_lexicon(args: argparse.Namespace, own: Lexicon = Lexicon()) -> Lexicon:
    """The entries that apply to a manuscript: the user's, its ``own`` (an EPUB's, read with
    its text), ``--project``'s."""
    from studio.project.lexicon import user_lexicon

    lexicon = own.inherit(user_lexicon())
    if args.project is not None:
        from studio.project.store import Project

        with Project.open(args.project) as project:
            lexicon = project.lexicon.entries().inherit(lexicon)
    return lexicon


def _project_sentences(project, make) -> list:  # project: Project; make: SpokenSentence
    """A project's sentences as the render will speak them (overrides and lexicon applied)."""
    out, counts = [], {}
    settings = project.settings()
    state = project.cast.state()
    for row in project.sentences():
        counts[row.chapter] = counts.get(row.chapter, 0) + 1
        paragraph = None if row.paragraph is None else row.paragraph + 1
        narrator = project.voice_for(row.language, settings)
        parts = state.parts.get(row.id, ())
        speaker = ", ".join(dict.fromkeys(p.name for p in parts if p.name))
        voices = [narrator if p.casting is None else p.casting.words().replace("narrator's voice", narrator)
                  for p in parts] or [narrator]
        out.append(make(row.chapter + 1, counts[row.chapter], paragraph, row.text, row.spoken or row.text, row.language,
                        speaker, " + ".join(dict.fromkeys(voices))))
    return out
