"""``studio cast``: the characters of a project, their lines and their voices."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TextIO

from studio.cli.common import print_table
from studio.core.errors import StudioError

SET_HELP = ("give a character a voice: NAME=VOICE[:SPEAKER][,pitch=+2,pace=0.95,expressive=1.2]; VOICE 'narrator' "
            "(or nothing before the first comma) is a performance of the narrator's voice")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cast", help="list a project's characters and unattributed lines; cast their voices",
                       description="The characters of a project (their line counts, other names, first line and "
                       "voice) and the lines no rule could attribute. Listing turns nothing on; --set, --merge, "
                       "--rename, --split and --line change the cast, and `studio render --cast` (or --on) speaks it.")
    p.add_argument("project", type=Path, help="project folder")
    p.add_argument("--json", action="store_true", help="write the cast and the unattributed lines as JSON")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VOICE", help=SET_HELP)
    p.add_argument("--merge", action="append", default=[], metavar="KEEP,OTHER",
                   help="make OTHER one character with KEEP (e.g. 'Captain Ahab,Ahab')")
    p.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                   help="call a character by another name (its voice goes with it; kept when the book is imported "
                   "again, where the rules find the old name)")
    p.add_argument("--split", action="append", default=[], metavar="NAME",
                   help="make a name or descriptor the rules (or a merge) tied to a character one of its own "
                   "(e.g. 'the captain'); kept when the book is imported again")
    p.add_argument("--line", action="append", default=[], metavar="CHAPTER:PARAGRAPH:SENTENCE=NAME",
                   help="correct who speaks a sentence (1-based numbers; NAME 'narrator' gives it back to the "
                   "narrator); kept when the book is imported again")
    p.add_argument("--paragraph", action="append", default=[], metavar="CHAPTER:PARAGRAPH=NAME",
                   help="a whole paragraph in a character's voice (a letter read by its writer)")
    p.add_argument("--chapter", action="append", default=[], metavar="CHAPTER=NAME",
                   help="a whole chapter in a character's voice (a chapter one character tells)")
    p.add_argument("--review", action="store_true",
                   help="list the lines that are not sure, in reading order, with the two most likely speakers")
    p.add_argument("--choose", action="append", default=[], metavar="CHAPTER:PARAGRAPH:SENTENCE=1|2|NAME",
                   help="choose who says a line of the review list: 1 or 2 (its first or second candidate) or a "
                   "name; kept when the book is imported again, undone by --undo")
    p.add_argument("--undo", action="store_true", help="undo the project's last edit (a choice, a merge...)")
    onoff = p.add_mutually_exclusive_group()
    onoff.add_argument("--on", action="store_true", help="turn casting on (the characters' lines in their voices)")
    onoff.add_argument("--off", action="store_true", help="turn casting off (every line in the narrator's voice)")
    p.set_defaults(func=_cmd_cast)


def parse_set(spec: str):  # -> tuple[str, studio.project.cast.Casting]
    """``NAME=VOICE[:SPEAKER][,pitch=+2,pace=0.95,expressive=1.2]`` as a name and a casting."""
    from studio.project.cast import Casting, Performance

    name, sep, rest = spec.partition("=")
    if not sep or not name.strip():
        raise StudioError(f"--set {spec!r}: write NAME=VOICE[:SPEAKER][,pitch=+2,pace=0.95]")
    items = [i.strip() for i in rest.split(",")]
    voice_spec = "" if "=" in items[0] else items.pop(0)
    # a speaker is the number after the last colon: voice ids hold colons too (kokoro:jf_alpha)
    voice, colon, speaker = voice_spec.rpartition(":")
    if not colon or not speaker.strip().isdigit():
        voice, speaker = voice_spec, ""
    voice = "" if voice.strip().lower() in ("", "narrator") else voice.strip()
    values = {"pitch": 0.0, "pace": 1.0, "expressive": 1.0}
    for item in items:
        key, _, value = item.partition("=")
        if key.strip() not in values:
            raise StudioError(f"--set {spec!r}: unknown setting {key.strip()!r} (pitch, pace, expressive)")
        try:
            values[key.strip()] = float(value)
        except ValueError:
            raise StudioError(f"--set {spec!r}: {key.strip()} needs a number, got {value!r}") from None
    return name.strip(), Casting(voice, int(speaker) if speaker else None, Performance(**values))


def check_voice(casting) -> None:  # casting: studio.project.cast.Casting
    """The voice is installed and has the speaker asked for (else a StudioError that says so)."""
    if not casting.voice_id:
        return
    from studio.engine.voice.catalog import get_voice

    info = get_voice(casting.voice_id)
    if casting.speaker is not None:
        speakers = max(1, len(info.abilities.speakers))
        if not 0 <= casting.speaker < speakers:
            raise StudioError(f"{casting.voice_id} has {speakers} speaker(s) (0-{speakers - 1}); "
                              f"there is no speaker {casting.speaker}")


def _find_sentence(project, spec: str) -> tuple[int, str]:  # project: studio.project.store.Project
    m = re.fullmatch(r"\s*(\d+):(\d+):(\d+)\s*=(.*)", spec)
    if not m:
        raise StudioError(f"--line {spec!r}: write CHAPTER:PARAGRAPH:SENTENCE=NAME (1-based)")
    c, p, s, name = int(m.group(1)) - 1, int(m.group(2)) - 1, int(m.group(3)) - 1, m.group(4).strip()
    for row in project.sentences([c]):
        if row.paragraph == p and row.index == s:
            return row.id, "" if name.lower() == "narrator" else name
    raise StudioError(f"--line {spec!r}: there is no sentence {s + 1} in paragraph {p + 1} of chapter {c + 1}")


def _find_block(project, spec: str) -> tuple[list[int], str]:  # project: studio.project.store.Project
    m = re.fullmatch(r"\s*(\d+)(?::(\d+))?\s*=(.*)", spec)
    if not m:
        raise StudioError(f"{spec!r}: write CHAPTER:PARAGRAPH=NAME or CHAPTER=NAME (1-based)")
    chapter, name = int(m.group(1)) - 1, m.group(3).strip()
    paragraph = None if m.group(2) is None else int(m.group(2)) - 1
    ids = [r.id for r in project.sentences([chapter]) if r.paragraph is not None
           and (paragraph is None or r.paragraph == paragraph)]
    if not ids:
        raise StudioError(f"{spec!r}: there is no such chapter or paragraph")
    return ids, "" if name.lower() == "narrator" else name


def _choose(project, spec: str) -> None:  # project: studio.project.store.Project
    """``--choose C:P:S=1|2|NAME``: the line's first or second candidate, or a name, in one undo step."""
    from studio.project.undo import UndoHistory

    sid, name = _find_sentence(project, spec)
    if name.isdigit():
        line = next((x for x in project.cast.lines() if x.sentence_id == sid), None)
        k = int(name) - 1
        if line is None or not 0 <= k < len(line.candidates):
            raise StudioError(f"--choose {spec!r}: that line has {len(line.candidates) if line else 0} candidate(s)")
        name = line.candidates[k]
    with UndoHistory(project.db).step(f"choose {name or 'the narrator'} for the line"):
        project.cast.correct(sid, name)


def _cmd_cast(args: argparse.Namespace) -> int:
    from studio.project.store import Project
    from studio.project.undo import UndoHistory

    if not Project.is_project(args.project):
        raise StudioError(f"{args.project} is not a project folder (render or import a manuscript first)")
    with Project.open(args.project) as project:
        cast = project.cast
        if not cast.analysed():
            cast.analyse()
        for spec in args.merge:
            keep, _, other = spec.partition(",")
            cast.merge(keep, other)
        for spec in args.rename:
            old, sep, new = spec.partition("=")
            if not sep:
                raise StudioError(f"--rename {spec!r}: write OLD=NEW")
            cast.rename(old, new)
        for name in args.split:
            cast.split(name)
        for spec in args.set:
            name, casting = parse_set(spec)
            check_voice(casting)
            cast.set_casting(name, casting)
        for spec in args.line:
            cast.correct(*_find_sentence(project, spec))
        for spec in args.paragraph + args.chapter:
            cast.correct(*_find_block(project, spec))
        for spec in args.choose:
            _choose(project, spec)
        if args.undo:
            undone = UndoHistory(project.db).undo()
            sys.stderr.write(f"undone: {undone}\n" if undone else "nothing to undo\n")
        if args.on or args.off:
            cast.set_enabled(bool(args.on))
        if args.merge or args.rename:
            cast.analyse()  # turns and pronouns follow the merged names
        if args.review and not args.json:
            _print_review(project, sys.stdout)
        else:
            _print(project, args.json, sys.stdout)
    return 0


def _refs(project) -> dict[int, str]:  # project: studio.project.store.Project
    """Each sentence's CHAPTER:PARAGRAPH:SENTENCE (1-based), as --line and --choose take it."""
    return {r.id: f"{r.chapter + 1}:{r.paragraph + 1}:{r.index + 1}" for r in project.sentences()
            if r.paragraph is not None}


def _print_review(project, out: TextIO) -> None:  # project: studio.project.store.Project
    lines, refs = project.cast.review(), _refs(project)
    out.write(f"{len(lines)} line(s) to review (not sure), in reading order; choose with "
              "--choose CHAPTER:PARAGRAPH:SENTENCE=1|2|NAME\n")
    if lines:
        rows = [("LINE", "1", "2", "EVIDENCE", "TEXT")]
        rows += [(refs.get(x.sentence_id, "?"), *(list(x.candidates) + ["", ""])[:2], x.evidence, x.text[:60])
                 for x in lines]
        print_table(rows, out)


def _print(project, as_json: bool, out: TextIO) -> None:  # project: studio.project.store.Project
    cast = project.cast
    members, lost = cast.members(), cast.unattributed()
    if as_json:
        refs = _refs(project)
        json.dump({"casting": cast.enabled(),
                   "characters": [{"name": m.name, "lines": m.lines, "first_line": m.first_line,
                                   "aliases": list(m.aliases), "names": list(m.names),
                                   "descriptors": list(m.descriptors), "voice": m.casting.voice_id,
                                   "speaker": m.casting.speaker,
                                   "pitch": m.casting.performance.pitch, "pace": m.casting.performance.pace,
                                   "expressive": m.casting.performance.expressive} for m in members],
                   "unattributed": [{"sentence": u.sentence_id, "text": u.text} for u in lost],
                   "lines": [{"sentence": x.sentence_id, "line": refs.get(x.sentence_id, ""), "text": x.text,
                              "speaker": x.speaker, "speaker_sure": x.sure, "speaker_evidence": x.evidence,
                              "rule": x.how, "candidates": list(x.candidates)} for x in cast.lines()]},
                  out, ensure_ascii=False, indent=1)
        out.write("\n")
        return
    out.write(f"casting is {'on' if cast.enabled() else 'off'}; {len(members)} character(s), "
              f"{len(lost)} unattributed line(s) (read by the narrator)\n")
    if members:
        rows = [("CHARACTER", "LINES", "VOICE", "ALSO CALLED", "FIRST LINE")]
        rows += [(m.name, str(m.lines), m.casting.words(), ", ".join(m.also_called)[:50], m.first_line[:50])
                 for m in members]
        print_table(rows, out)
    for u in lost[:20]:
        out.write(f"  unattributed: {u.text[:70]}\n")
