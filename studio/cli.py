"""The ``studio`` command line: ``voices``, ``inspect``, ``render``.

Why this shape: every subcommand is a ``register(subparsers)`` function that adds
its parser and sets ``func``; the built-in ones live here, later ones (``gui``,
``bench``) live in their own modules listed in :data:`COMMAND_MODULES` and are
imported when the parser is built, so those modules must import lightly (heavy
imports belong inside their handlers). Errors a person can act on
(:class:`~studio.core.errors.StudioError`) become one ``studio: error:`` line and
exit code 2 -- never a traceback; a full disk reads ``studio: error: disk full: ...``.
Ctrl-C exits 130 and keeps finished work. A render where some sentences failed
exports the complete chapters, lists the failures and exits 3; running the same
command again retries the failed sentences.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import time
from pathlib import Path
from typing import Callable, Sequence, TextIO

from studio import __version__
from studio.core.errors import DiskFull, StudioError, is_disk_full

#: Modules with a ``register(subparsers)`` function adding more subcommands.
COMMAND_MODULES: tuple[str, ...] = ("studio.ui.command", "studio.cli_bench", "studio.cli_export")

EXIT_ERROR = 2
#: the render finished but some sentences failed: their chapters were not exported
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130
INTERRUPTED_MESSAGE = "interrupted; finished sentences are kept, run the same command to resume"
RETRY_MESSAGE = "run the same command again to retry the failed sentences (finished ones are kept)"
#: failed sentences listed one by one at most; the rest are counted
MAX_LISTED_FAILURES = 20


# ------------------------------------------------------------------ helpers


def format_duration(seconds: float) -> str:
    """``h:mm:ss`` or ``m:ss`` (whole seconds)."""
    total = int(round(max(0.0, seconds)))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def parse_chapters(spec: str, count: int) -> list[int]:
    """``"1,3-5"`` (1-based, as ``studio inspect`` numbers them) -> sorted 0-based indices."""
    picked: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        try:
            lo, _, hi = part.partition("-")
            first, last = int(lo), int(hi) if hi else int(lo)
        except ValueError:
            raise StudioError(f"bad --chapters value '{spec}'; use numbers and ranges like 1,3-5") from None
        if first > last:
            raise StudioError(f"bad chapter range '{part}' in --chapters (start after end)")
        for n in range(first, last + 1):
            if not 1 <= n <= count:
                raise StudioError(f"chapter {n} does not exist (the book has {count} chapters)")
            picked.add(n - 1)
    if not picked:
        raise StudioError(f"bad --chapters value '{spec}'; use numbers and ranges like 1,3-5")
    return sorted(picked)


def print_table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        out.write("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")


class ProgressLine:
    """Render progress on stderr: one rewritten ``\\r`` line on a terminal, plain
    lines (every 10 % or 15 s) when redirected to a file or pipe."""

    def __init__(self, stream: TextIO, *, label: str = "rendering") -> None:
        self.stream = stream
        self.label = label
        self.tty = stream.isatty()
        self.last_step = -1
        self.last_time = 0.0
        self.open_line = False

    def __call__(self, p) -> None:  # p: studio.jobs.render.RenderProgress
        pct = int(100 * p.fraction)
        bar = "#" * (pct // 5) + "." * (20 - pct // 5)
        eta = f"eta {format_duration(p.eta)}" if p.eta is not None else "eta --:--"
        text = f"{self.label} {pct:3d}% [{bar}] {p.done + p.failed}/{p.total} sentences  {eta}"
        if p.failed:
            text += f"  {p.failed} failed"
        if self.tty:
            self.stream.write("\r" + text.ljust(78)[:120])
            self.stream.flush()
            self.open_line = True
            return
        now = time.monotonic()
        step = pct // 10
        if step != self.last_step or now - self.last_time >= 15:
            self.stream.write(text + "\n")
            self.stream.flush()
            self.last_step, self.last_time = step, now

    def finish(self) -> None:
        if self.open_line:
            self.stream.write("\n")
            self.stream.flush()
            self.open_line = False


# ------------------------------------------------------------------ voices


def _register_voices(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("voices", help="list installed voices", description="List the voices this machine has.")
    p.set_defaults(func=_cmd_voices)


def _cmd_voices(args: argparse.Namespace) -> int:
    from studio.engine.voices import list_voices

    voices = list_voices()
    if not voices:
        raise StudioError("no voices found; reinstall the studio to get the bundled voice")
    engines = {"piper": "onnx, torch", "coqui": "torch"}
    rows = [("ID", "BACKEND", "ENGINES", "LANGUAGE", "RATE", "SOURCE")]
    for v in voices:
        rows.append((v.id, v.backend, engines.get(v.backend, "?"), v.language, f"{v.sample_rate} Hz", v.source))
    print_table(rows, sys.stdout)
    return 0


# ------------------------------------------------------------------ inspect


def _register_inspect(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "inspect", help="show a manuscript's chapters and problems",
        description="Import a manuscript and report chapters, word counts, estimated "
        "durations, languages and anything to look at before rendering.",
    )
    p.add_argument("file", type=Path, help="manuscript (.txt, .md, .docx, .epub, ...)")
    p.add_argument("--long-chapter-minutes", type=float, default=60.0, metavar="MIN",
                   help="flag chapters longer than this when spoken (default: 60)")
    p.add_argument("--words-per-minute", type=float, default=155.0, metavar="WPM",
                   help="speaking rate for duration estimates (default: 155)")
    p.add_argument("--max-sentence-chars", type=int, default=500, metavar="N",
                   help="split sentences longer than this (default: 500)")
    p.set_defaults(func=_cmd_inspect)


def _cmd_inspect(args: argparse.Namespace) -> int:
    from studio.engine.voices import list_voices
    from studio.text.importer import load_manuscript
    from studio.text.inspect import inspect_book

    _require_file(args.file)
    book = load_manuscript(args.file, max_sentence_chars=args.max_sentence_chars)
    voice_languages = {v.language for v in list_voices()}
    report = inspect_book(
        book, words_per_minute=args.words_per_minute,
        long_chapter_minutes=args.long_chapter_minutes, voice_languages=voice_languages,
    )
    _print_report(report, sys.stdout)
    return 0


def _print_report(report, out: TextIO) -> None:  # report: studio.text.inspect.BookReport
    out.write(f"{report.title} -- {report.author or 'unknown author'} (main language: {report.language})\n\n")
    rows = [("#", "CHAPTER", "WORDS", "DURATION", "LANGUAGES", "FLAGS")]
    for c in report.chapters:
        flags = []
        if c.front_matter:
            flags.append("front matter (skipped unless chosen)")
        if c.too_long:
            flags.append("LONG")
        if c.split_sentences:
            flags.append(f"{len(c.split_sentences)} split sentence(s)")
        if c.unvoiced:
            flags.append(f"{len(c.unvoiced)} passage(s) without a voice")
        title = c.title if len(c.title) <= 40 else c.title[:39] + "\u2026"
        rows.append((str(c.index + 1), title, str(c.word_count), format_duration(c.duration_seconds),
                     ", ".join(c.languages) or "-", "; ".join(flags)))
    print_table(rows, out)
    out.write(
        f"\n{len(report.chapters)} chapter(s), {report.word_count} words, about "
        f"{format_duration(report.duration_seconds)} at {report.words_per_minute:g} words per minute; "
        f"languages: {', '.join(report.languages) or '-'}\n"
    )
    warnings = report.warnings()
    if warnings:
        out.write("\nto check before rendering:\n")
        for line in warnings:
            out.write(f"  - {line}\n")
        for s in (s for c in report.chapters for s in c.split_sentences):
            out.write(f"    split: chapter {s.chapter_index + 1}, paragraph {s.paragraph_index + 1}: {s.preview}\n")
        for p in report.unvoiced:
            out.write(f"    no '{p.language}' voice: chapter {p.chapter_index + 1}, "
                      f"paragraph {p.paragraph_index + 1}: {p.preview}\n")


# ------------------------------------------------------------------ render


def _register_render(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "render", help="render a manuscript or project to audio files",
        description="Render a manuscript (creating or resuming its project) or a project "
        "folder, then export one audio file per chapter. Interrupted renders resume "
        "where they stopped when the same command is run again.",
    )
    p.add_argument("input", type=Path, help="manuscript file or project folder")
    p.add_argument("-o", "--output", type=Path, required=True, help="folder for the chapter files")
    p.add_argument("--format", choices=("wav", "mp3"), default="mp3", help="output format (default: mp3)")
    p.add_argument("--voice", help="voice id (see `studio voices`; default: the project's, else the bundled voice)")
    p.add_argument("--engine", choices=("onnx", "torch"), help="synthesis backend (default: the project's, else onnx)")
    p.add_argument("--chapters", help="chapters to render, 1-based, e.g. 1,3-5 (default: all but front matter)")
    p.add_argument("--project", type=Path, help="project folder (default: <output>/<name>.studio)")
    p.add_argument("--sample-rate", type=int, metavar="HZ", help="output sample rate, e.g. 44100 (default: the voice's)")
    p.add_argument("--max-sentence-chars", type=int, default=500, metavar="N", help=argparse.SUPPRESS)
    model = p.add_argument_group(
        "model process",
        "The voice model runs in a separate process: if it crashes, it is restarted and the "
        "sentence retried once; a sentence that crashes it again is marked failed and the "
        "render goes on.",
    )
    model.add_argument("--in-process", action="store_true",
                       help="run the model inside this process instead (a model crash then ends the render)")
    model.add_argument("--recycle-after", type=int, default=1000, metavar="N",
                       help="start a fresh model process after N sentences, to give back memory (default: 1000; 0: never)")
    model.add_argument("--cuda-alloc-conf", metavar="CONF",
                       help="PYTORCH_CUDA_ALLOC_CONF for the model (default: the environment's, "
                            "else expandable_segments:True in the model process)")
    from studio.cli_bench import add_preset_arguments  # --preset / --streams: see studio/cli_bench.py

    add_preset_arguments(p)
    p.set_defaults(func=_cmd_render)


def _isolation(args: argparse.Namespace):  # -> studio.jobs.session.Isolation | None
    """The model-process options of ``studio render`` (None: ``--in-process``)."""
    from studio.jobs.session import Isolation

    if args.recycle_after < 0:
        raise StudioError(f"--recycle-after {args.recycle_after} must be 0 (never) or more")
    if args.in_process:
        if args.cuda_alloc_conf:  # read by torch when it first touches CUDA, which is later
            os.environ["PYTORCH_CUDA_ALLOC_CONF"] = args.cuda_alloc_conf
        return None
    conf = args.cuda_alloc_conf
    if conf is None:
        conf = None if os.environ.get("PYTORCH_CUDA_ALLOC_CONF") else Isolation().cuda_alloc_conf
    return Isolation(recycle_after=args.recycle_after, cuda_alloc_conf=conf)


def _cmd_render(args: argparse.Namespace) -> int:
    from studio.jobs.export import default_chapters, export_chapter_files, incomplete_chapters
    from studio.jobs.render import render_project
    from studio.jobs.preset_render import check_choice, choose_preset, preset_engines
    from studio.jobs.session import apply_choices

    started = time.monotonic()
    if args.sample_rate is not None and not 8000 <= args.sample_rate <= 192000:
        raise StudioError(f"--sample-rate {args.sample_rate} is out of range (8000-192000 Hz)")
    isolation = _isolation(args)
    check_choice(args.preset, args.engine, args.streams)  # an unavailable preset stops here, with the reason
    project = _open_project(args)
    engine = None
    bar = ProgressLine(sys.stderr)
    try:
        settings = apply_choices(project, voice_id=args.voice, backend=args.engine)
        settings = choose_preset(project, settings, args.preset, args.engine)
        chapters = (
            parse_chapters(args.chapters, len(project.chapters())) if args.chapters else default_chapters(project)
        )
        skipped = 0 if args.chapters else len(project.chapters()) - len(chapters)
        run = preset_engines(settings, streams=args.streams, isolation=isolation)
        engine, factory = run.engine, run.engine_for
        sys.stderr.write(f"studio: {run.label}\n")
        try:
            result = render_project(project, engine, chapters=set(chapters), progress=bar, engine_for=factory,
                                    batch_size=run.batch_size)
        finally:
            bar.finish()
        broken = incomplete_chapters(project, chapters)
        titles = {c.index: c.title for c in project.chapters()}
        ready = [c for c in chapters if c not in broken]
        files = export_chapter_files(
            project, args.output, args.format, ready, args.sample_rate, engine=engine, engine_for=factory
        ) if ready else []
    finally:
        if engine is not None:
            engine.close()
        project.close()

    wall = time.monotonic() - started
    audio = sum(f.duration for f in files)
    for f in files:
        print(f.path)
    print(
        f"{len(files)} chapter file(s), {format_duration(audio)} of audio ({audio:.1f} s) in "
        f"{wall:.1f} s wall time: real-time factor {wall / audio if audio else 0:.3f} "
        f"({audio / wall if wall else 0:.1f}x real time)"
    )
    speed = f", {result.audio_seconds / result.synth_seconds:.1f}x real time" if result.synth_seconds else ""
    print(
        f"sentences: {result.synthesized} synthesized ({result.audio_seconds:.1f} s of speech in "
        f"{result.synth_seconds:.1f} s of synthesis{speed}), {result.reused} from cache, "
        f"{result.done - result.synthesized - result.reused} already done, {result.failed} failed"
    )
    if skipped:
        sys.stderr.write(f"studio: skipped {skipped} front-matter chapter(s); choose them with --chapters\n")
    if broken:
        _report_incomplete(broken, titles, exported=len(files), out=sys.stderr)
        return EXIT_INCOMPLETE
    return 0


def _report_incomplete(broken, titles: dict[int, str], *, exported: int, out: TextIO) -> None:
    """Failed sentences with their reasons, the chapters left out, and what to do.

    ``broken``: chapter index -> its sentences that are not done
    (:func:`studio.jobs.export.incomplete_chapters`).
    """
    rows = [r for idx in sorted(broken) for r in broken[idx]]
    failed = [r for r in rows if r.state == "failed"]
    if failed:
        out.write(f"studio: {len(failed)} sentence(s) failed:\n")
        for r in failed[:MAX_LISTED_FAILURES]:
            text = " ".join(r.text.split())
            text = text if len(text) <= 60 else text[:59] + "\u2026"
            out.write(f'studio:   chapter {r.chapter + 1} "{titles.get(r.chapter, "")}", sentence {r.id}: '
                      f'"{text}" -- {r.reason or "unknown reason"}\n')
        if len(failed) > MAX_LISTED_FAILURES:
            out.write(f"studio:   ... and {len(failed) - MAX_LISTED_FAILURES} more\n")
    if len(rows) > len(failed):
        out.write(f"studio: {len(rows) - len(failed)} sentence(s) not rendered\n")
    names = ", ".join(f'{idx + 1} "{titles.get(idx, "")}"' for idx in sorted(broken))
    out.write(f"studio: not exported (incomplete): chapter {names}; {exported} complete chapter file(s) written\n")
    out.write(f"studio: {RETRY_MESSAGE}\n")


def _open_project(args: argparse.Namespace):  # -> studio.project.Project
    """The project for ``args.input``: a project folder, or a manuscript's (new or resumed)."""
    from studio.engine.voices import get_voice
    from studio.jobs.session import default_project_dir, new_project_settings, open_for_manuscript
    from studio.project import Project

    src: Path = args.input
    if not src.exists():
        raise StudioError(f"{src}: no such file or folder")
    if src.is_dir():
        if not Project.is_project(src):
            raise StudioError(f"{src} is a folder but not a studio project; give a manuscript file or a project folder")
        return Project.open(src)
    voice = get_voice(args.voice)
    settings = new_project_settings(voice, args.engine or "onnx")
    folder = args.project or default_project_dir(src, args.output)
    opened = open_for_manuscript(src, folder, settings, max_sentence_chars=args.max_sentence_chars)
    if opened.action != "created":
        sys.stderr.write(f"studio: {opened.action} project {folder}\n")
    return opened.project


# ------------------------------------------------------------------ main


def _require_file(path: Path) -> None:
    if not path.exists():
        raise StudioError(f"{path}: no such file")
    if path.is_dir():
        raise StudioError(f"{path} is a folder, not a manuscript file")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="studio", description="Audiobook studio: manuscripts in, chapters out.")
    parser.add_argument("--version", action="version", version=f"studio {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    registrars: list[Callable[[argparse._SubParsersAction], None]] = [
        _register_voices, _register_inspect, _register_render,
    ]
    registrars += [importlib.import_module(name).register for name in COMMAND_MODULES]
    for register in registrars:
        register(sub)
    return parser


def _setup_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("studio: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``studio`` console script and ``python -m studio``."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:  # plain `studio` opens the desktop app, as a producer expects
        argv = ["gui"]
    args = parser.parse_args(argv)
    _setup_logging(args.verbose)
    try:
        return int(args.func(args) or 0)
    except StudioError as err:
        _error(str(err))
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write(f"\nstudio: {INTERRUPTED_MESSAGE}\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `studio voices | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except OSError as err:  # disk full, permission denied: the environment, not a bug
        if is_disk_full(err):  # a write the cache, database and writers did not map
            _error(str(DiskFull(err.filename or "a file", (err.strerror or "no space left on device").lower())))
            return EXIT_ERROR
        where = f": {err.filename}" if getattr(err, "filename", None) else ""
        _error(f"{err.strerror or err}{where}")
        return EXIT_ERROR


def _error(message: str) -> None:
    line = " ".join(message.split()) or "unknown error"
    sys.stderr.write(f"studio: error: {line}\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
