"""``studio render``: a manuscript or project to chapter files, resuming what was done.

A render where some sentences failed exports the complete chapters, lists the
failures and exits 3; running the same command again retries them.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
import sys
import time
from pathlib import Path
from typing import TextIO

from studio.cli.bench import add_preset_arguments
from studio.cli.triton import add_render_arguments as add_triton_arguments, triton_changes
from studio.cli.pacing import add_render_arguments as add_pacing_arguments, pacing_changes
from studio.cli.proof import add_model_arguments, chapter_proofer, proof_after_render
from studio.cli.content import add_arguments as add_content_arguments, content_changes
from studio.cli.common import EXIT_INCOMPLETE, RETRY_MESSAGE, ProgressLine, format_duration, parse_chapters
from studio.audio.formats import FORMATS
from studio.core.errors import StudioError

#: failed sentences listed one by one at most; the rest are counted
MAX_LISTED_FAILURES = 20


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "render", help="render a manuscript or project to audio files",
        description="Render a manuscript (creating or resuming its project) or a project "
        "folder, then export one audio file per chapter. Interrupted renders resume "
        "where they stopped when the same command is run again.",
    )
    p.add_argument("input", type=Path, help="manuscript file or project folder")
    p.add_argument("-o", "--output", type=Path, required=True, help="folder for the chapter files")
    p.add_argument("--format", choices=[f for f, enc in FORMATS.items() if not enc.whole_book], default="mp3",
                   help="output format (default: mp3; an M4B is made by `studio export`)")
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
    p.add_argument("--cast", action="store_true",
                   help="turn casting on: each character's lines in the voice `studio cast` gives it")
    p.add_argument("--unvoiced", choices=("native", "book", "skip"),
                   help="a passage in a language no voice speaks: the book's voice with that language's "
                        "phonemes (native, the default), read as the book's language (book), or left silent "
                        "and listed (skip); stored in the project")
    add_content_arguments(p.add_argument_group("notes, images, tables and code"), stored=True)
    proof = p.add_argument_group("proof-listening", "--proof: hear every rendered sentence back and list those "
                                 "that need a human ear (exit 3 when some do)")
    proof.add_argument("--proof", action="store_true", help="proof-listen the rendered chapters (see `studio proof`)")
    add_model_arguments(proof, short_device=False)
    add_preset_arguments(p)
    add_pacing_arguments(p)
    add_triton_arguments(p)
    p.set_defaults(func=_cmd_render)


def isolation_from_args(args: argparse.Namespace):  # -> studio.stack.build.Isolation | None
    """The model-process options of ``studio render`` (None: ``--in-process``)."""
    from studio.stack.build import Isolation

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


def render_plan(args: argparse.Namespace, settings):  # -> studio.stack.build.EnginePlan
    """The engine plan of ``studio render``: the project's preset with the user's
    ``--streams`` and model-process options (the desktop app plans the same way)."""
    from studio.stack.build import plan_for_project

    return plan_for_project(settings, streams=args.streams, isolation=isolation_from_args(args))


def _cmd_render(args: argparse.Namespace) -> int:
    from studio.stack.preset_choice import check_choice

    started = time.monotonic()
    if args.sample_rate is not None and not 8000 <= args.sample_rate <= 192000:
        raise StudioError(f"--sample-rate {args.sample_rate} is out of range (8000-192000 Hz)")
    isolation_from_args(args)  # bad model-process options stop here, before a project is touched
    # an unavailable preset stops here, with the reason (on Triton the servers run it)
    check_choice(args.preset, args.engine, args.streams, remote=bool(args.triton))
    early = _early_start(args)
    # what the render needs after its model process started (the store, the render loop, the
    # export): imported while that process starts, not before it (start-up, docs/speed-notes.md)
    from studio.delivery.export import default_chapters, export_chapter_files, incomplete_chapters
    from studio.project.opening import apply_choices
    from studio.rendering.render import render_project
    from studio.stack.build import build_engine, voice_engines
    from studio.stack.preset_choice import choose_preset

    engine = None
    try:
        project = _open_project(args)
    except BaseException:
        if early is not None:
            early.close()
        raise
    if "lingua" in sys.modules:  # the manuscript was read: its languages are stored, the render detects none
        from studio.text.detector import release_models

        release_models()  # the detector's n-gram models, held for the process otherwise (docs/kokoro.md)
    bar = ProgressLine(sys.stderr)
    proofer = None
    try:
        settings = apply_choices(project, voice_id=args.voice, backend=args.engine)
        if args.cast and not project.cast.enabled():
            project.cast.set_enabled(True)
        if args.unvoiced and args.unvoiced != settings.unvoiced:
            settings = settings.with_changes(unvoiced=args.unvoiced)
            project.update_settings(settings)
        if (chosen := settings.with_changes(**content_changes(args))) != settings:
            settings = chosen
            project.update_settings(settings)
        if (paced := pacing_changes(args, settings)) != settings:
            settings = paced
            project.update_settings(settings)
        changed, target = triton_changes(args, settings.triton)
        if changed:
            settings = settings.with_changes(triton=target)
            project.update_settings(settings)
        settings = choose_preset(project, settings, args.preset, args.engine)
        chapters = (
            parse_chapters(args.chapters, len(project.chapters())) if args.chapters else default_chapters(project)
        )
        skipped = 0 if args.chapters else len(project.chapters()) - len(chapters)
        plan = render_plan(args, settings)
        engine = early.take(plan) if early is not None else None
        engine, factory = engine or build_engine(plan), voice_engines(plan)
        stored = "" if settings.preset else f" (project has no preset: {settings.backend} default)"
        sys.stderr.write(f"studio: {plan.describe()}{stored}\n")
        proofer = chapter_proofer(args, project, bar) if args.proof else None
        try:
            result = render_project(project, engine, chapters=set(chapters), progress=bar, engine_for=factory,
                                    batch_size=plan.batch_size, on_chapter=proofer)
            if proofer is not None:
                proofer.wait()
        finally:
            bar.finish()
        proofed = proof_after_render(args, project, chapters, proofer, engine, factory,
                                     plan.batch_size) if proofer is not None else 0
        silent = [r for r in project.sentences(chapters) if r.skipped]
        broken = incomplete_chapters(project, chapters)
        titles = {c.index: c.name for c in project.chapters()}
        ready = [c for c in chapters if c not in broken]
        files = export_chapter_files(
            project, args.output, args.format, ready, args.sample_rate, engine=engine, engine_for=factory,
            batch_size=plan.batch_size) if ready else []
    finally:
        if early is not None:
            early.close()
        if proofer is not None:
            proofer.close()
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
    from studio.text.content import what_is_silent

    chosen = Counter(what_is_silent(r.kind) for r in silent if r.kind)
    if chosen:
        sys.stderr.write("studio: left out by the project's choices (--notes, --images, --tables, --code): "
                         + ", ".join(f"{what} {n}" for what, n in chosen.items()) + "\n")
    silent = [r for r in silent if not r.kind]
    for r in silent[:MAX_LISTED_FAILURES]:
        sys.stderr.write(f"studio: left silent (no '{r.language}' voice): chapter {r.chapter + 1}, sentence {r.id}: "
                         f"{' '.join(r.text.split())[:60]}\n")
    if len(silent) > MAX_LISTED_FAILURES:
        sys.stderr.write(f"studio: ... and {len(silent) - MAX_LISTED_FAILURES} more left silent\n")
    if broken:
        _report_incomplete(broken, titles, exported=len(files), out=sys.stderr)
        return EXIT_INCOMPLETE
    return proofed


def _report_incomplete(broken, titles: dict[int, str], *, exported: int, out: TextIO) -> None:
    """Failed sentences with their reasons, the chapters left out, and what to do.

    ``broken``: chapter index -> its sentences that are not done
    (:func:`studio.delivery.export.incomplete_chapters`).
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


def _early_start(args: argparse.Namespace):  # -> studio.stack.build.EarlyStart | None
    """Start the model while a *new* project is created from a manuscript.

    Only for a manuscript whose project does not exist yet: then the plan is known
    from the arguments alone (the voice and preset asked for, else the defaults),
    and there is surely something to synthesize. A resumed project may be fully
    rendered already, and then nothing should load at all.
    """
    from studio.engine.voice.catalog import get_voice
    from studio.project.folder import default_project_dir
    from studio.stack.build import EarlyStart, plan_engine
    from studio.stack.preset_speed import default_preset

    src: Path = args.input
    if args.triton or not src.is_file() or (args.project or default_project_dir(src, args.output)).exists():
        return None
    try:
        voice = get_voice(args.voice)
    except StudioError:
        return None  # _open_project reports it
    preset = args.preset or default_preset(voice, args.engine).name
    return EarlyStart(plan_engine(preset, voice, streams=args.streams, isolation=isolation_from_args(args)))


def _open_project(args: argparse.Namespace):  # -> studio.project.store.Project
    """The project for ``args.input``: a project folder, or a manuscript's (new or resumed)."""
    from studio.project.folder import default_project_dir
    from studio.project.opening import open_project

    folder = None if args.input.is_dir() else args.project or default_project_dir(args.input, args.output)
    opened = open_project(args.input, folder=folder, voice_id=args.voice, backend=args.engine or "onnx",
                          max_sentence_chars=args.max_sentence_chars)
    if opened.action not in ("created", "opened"):
        sys.stderr.write(f"studio: {opened.action} project {folder}\n")
    return opened.project
