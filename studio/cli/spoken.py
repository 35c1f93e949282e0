"""``studio inspect --spoken [--json]`` and ``--audit``: what the voice will say for each sentence.

Why its own module: the listing reads a project (its overrides and lexicon decide
the spoken form) or a manuscript (the normaliser and the user's and the book's
lexicons), and prints either a table of the changed sentences or JSON of all, each
with the phonemes the voice's front end is given (the render's own front end). The
audit (:mod:`studio.text.audit`) reads the same sentences.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import TextIO

from studio.cli.common import print_table
from studio.core.lexicon import Lexicon


def print_spoken(args: argparse.Namespace, book, out: TextIO, own: Lexicon = Lexicon()) -> int:  # book: Book
    """``own``: the manuscript's own pronunciations (an EPUB's, read with its text)."""
    from studio.text.spoken_report import changed_only

    sentences = voiced_sentences(args, book, own, phonemes=args.json)
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


def voiced_sentences(args: argparse.Namespace, book, own: Lexicon = Lexicon(), *, phonemes: bool = True) -> list:
    """The book's (or project's) sentences as :class:`~studio.text.spoken_report.SpokenSentence`,
    each with the phonemes its voice is given when ``phonemes``."""
    from studio.project.store import Project
    from studio.rendering.phonemes import voice_phonemes
    from studio.text.spoken_report import SpokenSentence, book_sentences

    if Project.is_project(args.file):
        with Project.open(args.file) as project:
            return _project_sentences(project, SpokenSentence, phonemes)
    lexicon = manuscript_lexicon(args, own)
    sentences = book_sentences(book, lexicon)
    if not phonemes:
        return sentences
    say = voice_phonemes(None)
    return [dataclasses.replace(s, phonemes=say(s.spoken, s.language, lexicon)) for s in sentences]


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


def _project_sentences(project, make, phonemes: bool = False) -> list:  # project: Project; make: SpokenSentence
    """A project's sentences as the render will speak them (overrides and lexicon applied);
    ``phonemes``: with what the render gives each one's voice."""
    from studio.core.errors import VoiceError
    from studio.project.unvoiced import SKIPPED
    from studio.rendering.phonemes import voice_phonemes

    out, counts = [], {}
    settings = project.settings()
    state = project.cast.state()
    renditions = project.renditions() if phonemes else {}
    for row in project.sentences():
        counts[row.chapter] = counts.get(row.chapter, 0) + 1
        paragraph = None if row.paragraph is None else row.paragraph + 1
        narrator = project.voice_for(row.language, settings)
        parts = state.parts.get(row.id, ())
        speaker = ", ".join(dict.fromkeys(p.name for p in parts if p.name))
        voices = [narrator if p.casting is None else p.casting.words().replace("narrator's voice", narrator)
                  for p in parts] or [narrator]
        said = ""
        if (r := renditions.get(row.id)) is not None and not r.said.startswith(SKIPPED):
            try:
                said = voice_phonemes(r.voice_id)(r.spoken, r.said, r.lexicon)
            except VoiceError:  # the project's voice is not installed here: nothing to show
                said = ""
        quoted = [p for p in parts if p.quoted]
        out.append(make(row.chapter + 1, counts[row.chapter], paragraph, row.text, row.spoken or row.text, row.language,
                        speaker, " + ".join(dict.fromkeys(voices)), said,
                        all(p.sure for p in quoted) if quoted else None,
                        ", ".join(dict.fromkeys(p.evidence for p in quoted))))
    return out
