"""``studio export``: publish-ready files from a rendered project.

Plugged into :mod:`studio.cli` through ``COMMAND_MODULES``. Imports stay light
here; the work is :func:`studio.delivery.publish.publish`. Nothing is synthesized:
the files are made from the project's verified audio cache, and a chapter that
is not completely rendered is refused with the reason (render it first).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from studio.audio.formats import FORMATS
from studio.core.errors import StudioError

#: ``--acx`` and some file failed the check (the files are written all the same)
EXIT_ACX_FAILED = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export", help="publish-ready files (M4B, MP3, FLAC, Opus, WAV) from a rendered project",
        description="Master the rendered chapters (44.1 kHz, RMS normalized, true peak limited, room tone "
        "at head and tail), write them as an M4B with chapters or one file per chapter, with opening and "
        "closing credits spoken with the project's voice, a retail sample, tags (the narration disclosed as "
        "synthetic), cover art, SRT/WebVTT subtitles and manifest.json, and check every file's levels (the "
        "ACX check for one MP3 per chapter). The book itself comes from the project's rendered audio only; "
        "render first with `studio render`. Everything is written under temporary names and moved into "
        "place at the end: a failed export leaves nothing behind.",
    )
    p.add_argument("project", type=Path, help="project folder (<name>.studio)")
    p.add_argument("-o", "--output", type=Path, help="folder for the files (needed unless --credits-text "
                   "only prints the credits)")
    p.add_argument("--format", choices=tuple(FORMATS), default="m4b", help="m4b: the whole book with chapter markers; "
                   "the others: one file per chapter (default: m4b)")
    p.add_argument("--acx", action="store_true", help="print the full ACX report of every file and exit 3 "
                   "when one fails (ACX takes MP3: use --format mp3)")
    p.add_argument("--chapters", help="chapters, 1-based, e.g. 1,3-5 (default: all but front matter)")
    p.add_argument("--single-file", action="store_true", help="mp3: one file for the book with ID3 chapter frames")
    p.add_argument("--cover", type=Path, metavar="IMAGE", help="cover art, JPEG or PNG (default: the EPUB's cover)")
    p.add_argument("--cover-fit", choices=("pad", "crop"), help="make the cover the square stores want: pad a "
                   "portrait or landscape image to a square, or crop its centre (default: as it is, with a warning)")
    p.add_argument("--narrator", help="narrator tag and credit (default: the project's, see `studio details`, "
                   "else 'Synthetic voice (<voice name>)')")
    p.add_argument("--year", help="year tag (default: the manuscript's date, else this year)")
    p.add_argument("--no-subtitles", action="store_true", help="no SRT/WebVTT files")
    c = p.add_argument_group("credits and retail sample")
    c.add_argument("--credits", action=argparse.BooleanOptionalAction, default=True, help="opening and closing "
                   "credits spoken with the project's voice (default: on)")
    c.add_argument("--opening-credits", metavar="TEXT", help="the opening credits' wording (a line per paragraph; "
                   "default: title, author, narrator)")
    c.add_argument("--closing-credits", metavar="TEXT", help="the closing credits' wording (default: 'The end', "
                   "copyright, the synthetic-narration disclosure)")
    c.add_argument("--credits-text", action="store_true", help="print the credits as they will be spoken "
                   "(opening, a line '---', closing) and stop; nothing is exported")
    c.add_argument("--credits-file", type=Path, metavar="FILE", help="speak these credits: the printed form of "
                   "--credits-text, edited")
    c.add_argument("--producer", metavar="NAME", help="the recording's copyright holder: 'Recording copyright "
                   "<year> by NAME' (default: the project's, see `studio details`; none: no name)")
    c.add_argument("--rights", metavar="TEXT", help="the book's rights, e.g. 'public domain' or 'Copyright 2019 "
                   "by Acme Press' (default: what the book says: EPUB dc:rights, front matter, copyright page)")
    c.add_argument("--sample", action=argparse.BooleanOptionalAction, default=True, help="a retail sample as its "
                   "own mastered file (default: on)")
    c.add_argument("--sample-chapter", type=int, metavar="N", help="the sample's chapter, 1-based (default: the "
                   "first prose chapter; never the credits)")
    c.add_argument("--sample-length", type=float, default=180.0, metavar="S", help="the sample's length, "
                   "60-300 s, in whole paragraphs (default: 180)")
    p.add_argument("--require-proof", action="store_true", help="refuse when a chapter has sentences not "
                   "proof-listened or still to review (see `studio proof`)")
    m = p.add_argument_group("mastering")
    m.add_argument("--target-rms", type=float, default=-20.0, metavar="DB", help="RMS target, -23 to -18 (default: -20)")
    m.add_argument("--head", type=float, default=0.75, metavar="S", help="room tone before the first word, "
                   "0.5-1 s (default: 0.75)")
    m.add_argument("--tail", type=float, default=2.0, metavar="S", help="room tone after the last word, "
                   "1-5 s (default: 2)")
    p.set_defaults(func=_cmd_export)


def _cmd_export(args: argparse.Namespace) -> int:
    from studio.audio.mastering import MasteringConfig
    from studio.cli.common import format_duration, parse_chapters
    from studio.delivery.export_book import credits_as_text, credits_from_text, export_book, spoken_credits
    from studio.delivery.proof_state import report_text
    from studio.delivery.publish import PublishOptions
    from studio.project.store import Project

    if not Project.is_project(args.project):
        hint = "; a manuscript's project is the folder <name>.studio beside the output of `studio render`" \
            if args.project.is_file() else ""
        raise StudioError(f"{args.project} is not a studio project{hint}")
    if args.single_file and args.format != "mp3":
        raise StudioError("--single-file is for --format mp3 (an M4B is always one file)")
    printing = args.credits_text
    if args.output is None and not printing:
        raise StudioError("give the folder for the files with -o/--output")
    opening, closing = _unescape(args.opening_credits), _unescape(args.closing_credits)
    if args.credits_file:
        edited = credits_from_text(args.credits_file.read_text(encoding="utf-8"))
        opening, closing = edited.opening, edited.closing
    mastering = MasteringConfig(target_rms_db=args.target_rms, head_s=args.head, tail_s=args.tail)
    out = sys.stdout
    with Project.open(args.project) as project:
        chapters = parse_chapters(args.chapters, len(project.chapters())) if args.chapters else None
        options = PublishOptions(
            fmt=args.format, chapters=chapters, mastering=mastering, cover=args.cover, cover_fit=args.cover_fit,
            narrator=args.narrator, year=args.year, subtitles=not args.no_subtitles, single_file=args.single_file,
            credits=args.credits, opening=opening, closing=closing,
            sample=args.sample, sample_chapter=args.sample_chapter - 1 if args.sample_chapter else None,
            sample_seconds=args.sample_length, producer=args.producer, rights=args.rights,
        )
        if printing:
            out.write(credits_as_text(spoken_credits(project, options)))
            return 0
        done = export_book(project, args.output, options, require=args.require_proof, progress=_progress)
    result, proof = done.result, done.proof
    for w in result.warnings:
        sys.stderr.write(f"studio: warning: {w}\n")
    label = "ACX" if result.acx_format else "levels"
    for f in result.files:
        verdict = f"{label} pass" if f.acx.passed else f"{label} FAIL: " + "; ".join(f.acx.reasons)
        lv = f.levels
        holds = f"  [{f.holds}]" if f.holds else ""
        out.write(f"{f.path}  {format_duration(f.duration)}  RMS {lv.rms_db:.1f} dB, true peak {lv.true_peak_db:.1f} dBFS, "
                  f"floor {lv.noise_floor_db:.1f} dB, {lv.lufs:.1f} LUFS  {verdict}{holds}\n")
        if len(f.chapters) > 1:
            for mark in f.chapters:
                out.write(f"    {format_duration(mark.start)}  {mark.title}\n")
    if result.cover is not None:
        out.write(result.cover.line() + "\n")
    if result.meta is not None:
        out.write(f"narrator: {result.meta.narrator}; disclosure: {result.meta.disclosure}\n")
    if args.acx:
        out.write(f"\n{result.check_name}\n")
        for f in result.files:
            out.write(f.acx.text() + "\n")
        out.write(ACX_REMINDER + "\n" if result.acx_format else
                  "(ACX takes one MP3 per chapter: export with --format mp3 for the ACX check)\n")
        out.write(report_text(proof) + "\n")
    else:  # the book's line (the Proof dock's words); --acx adds each chapter's
        out.write(f"Proof-listening: {proof['summary']}\n")
    total = sum(f.duration for f in result.files)
    failed = sum(not f.acx.passed for f in result.files)
    out.write(f"{len(result.files)} file(s), {format_duration(total)} of audio; {result.check_name}: "
              f"{len(result.files) - failed} pass, {failed} fail; manifest: {result.manifest}\n")
    return EXIT_ACX_FAILED if args.acx and failed else 0


#: Printed under an ACX report: the check measures the audio, not the store's terms.
ACX_REMINDER = ("Note: the narration is synthetic. ACX accepts synthetic (AI) narration only where its current "
                "terms allow it; check them before you submit, and keep the disclosure in the credits and tags.")


def _unescape(text: str | None) -> str | None:
    """``\\n`` typed on a command line as a line break (one paragraph per line)."""
    return None if text is None else text.replace("\\n", "\n")


def _progress(p) -> None:  # p: studio.delivery.publish.PublishProgress
    if p.current:
        sys.stderr.write(f"studio: mastering {p.done + 1}/{p.total}: {p.current}\n")
        sys.stderr.flush()
