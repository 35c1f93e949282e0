"""``studio proof``: listen back to a project's rendered sentences, or to any recording.

Exit status: 0 when nothing needs listening, 3 when some sentences do, 2 for an
error a person can fix (a missing or damaged speech model: one line saying how to
get it). ``--json`` prints a list of objects (``chapter``, ``index``, ``text``,
``heard``, ``reasons``, ``severity``, ...) instead of the report.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from studio.cli.common import EXIT_INCOMPLETE, ProgressLine, parse_chapters, require_file
from studio.core.errors import StudioError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "proof", help="listen back to rendered sentences and list those that need a human ear",
        description="Proof-listen a project (every rendered sentence heard back by a speech recogniser and "
                    "compared with its text), or a recording against its text (--audio/--text). Exit 0: "
                    "nothing flagged; 3: some sentences need listening.")
    p.add_argument("project", type=Path, nargs="?", help="project folder")
    p.add_argument("--chapters", help="chapters to check, 1-based, e.g. 1,3-5 (default: all but front matter)")
    p.add_argument("--again", action="store_true", help="check sentences again even if their audio was checked")
    p.add_argument("--audio", type=Path, help="a recording to check (with --text; no project)")
    p.add_argument("--text", type=Path, help="the recording's text, as spoken (numbers and symbols in words)")
    p.add_argument("--language", default="en", help="language of --audio/--text (ISO 639-1, default: en)")
    p.add_argument("--subtitles", type=Path, metavar="SRT",
                   help="the recording's subtitles (SRT or WebVTT, as the studio exports them with a render): "
                   "sentences are cut at their times instead of found by listening, and the recording is judged "
                   "as the studio's own render (a short word heard swapped is the recogniser's, not the voice's)")
    add_model_arguments(p)
    p.add_argument("--json", action="store_true", help="print the flagged sentences as JSON")
    p.set_defaults(func=_cmd_proof)


def add_model_arguments(p: argparse.ArgumentParser | argparse._ArgumentGroup, *, short_device: bool = True) -> None:
    """The recogniser options (shared with ``studio render --proof``, where ``--device`` would
    read as the voice's device, so only ``--asr-device`` is offered there)."""
    p.add_argument("--asr-model", metavar="M",
                   help="speech model: a faster-whisper model folder or name (small.en, medium, large-v3-turbo, "
                   "distil-large-v3 ...; downloaded once into the cache, checked) (default: the embedded Whisper base)")
    p.add_argument("--asr-device", *(("--device",) if short_device else ()), dest="asr_device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where the speech model runs (default: CUDA when a GPU is present)")
    p.add_argument("--retry", type=int, default=2, metavar="N",
                   help="new takes (at most 2) for a sentence flagged as a synthesis glitch (default: 2; 0: none)")


def open_checker(args: argparse.Namespace) -> Any:  # -> studio.proof.check.Checker
    from studio.proof.check import Checker

    shown: dict[str, int] = {}

    def progress(p: Any) -> None:  # a first download of a named model: a line per tenth
        tenth = 10 * p.done // p.total if p.total else 0
        if shown.get(p.file) != tenth:
            shown[p.file] = tenth
            print(f"downloading speech model {p.name}: {p.file} {p.done >> 20} of {p.total >> 20} MiB",
                  file=sys.stderr, flush=True)

    # the model loads while the first pass begins; a load error comes where it is first needed
    return Checker.open(args.asr_model, args.asr_device, progress=progress, wait=False)


def _cmd_proof(args: argparse.Namespace) -> int:
    if args.audio or args.text:
        if not (args.audio and args.text) or args.project:
            raise StudioError("--audio and --text go together, without a project")
        return _recording(args)
    if args.subtitles:
        raise StudioError("--subtitles goes with --audio and --text")
    if args.project is None:
        raise StudioError("give a project folder, or --audio FILE --text FILE")
    if not 0 <= args.retry <= 2:
        raise StudioError(f"--retry {args.retry}: use 0, 1 or 2")
    from studio.project.opening import open_project

    project = open_project(args.project).project
    try:
        from studio.delivery.export import default_chapters

        chapters = set(parse_chapters(args.chapters, len(project.chapters())) if args.chapters
                       else default_chapters(project))
        checker = open_checker(args)
        run = run_proof(project, checker, chapters, args, again=args.again)
        checker.loaded()
        print(f"heard as written by the first pass: {checker.listener.trusted}; by Whisper: "
              f"{checker.listener.decoded}; cleared by the second listener: {checker.cleared}", file=sys.stderr)
        return report_project(project, run, chapters, as_json=args.json)
    finally:
        project.close()


def chapter_proofer(args: argparse.Namespace, project: Any, bar: ProgressLine) -> Any:
    """``studio render --proof``: each chapter heard back as soon as it is rendered, a line per chapter."""
    from studio.rendering.proofing import ChapterProofer, overlaps
    from studio.proof.model import choose_device, cuda_devices

    loaded: list[Any] = []
    names = {c.index: c.name for c in project.chapters()}

    def checker() -> Any:
        if not loaded:
            loaded.append(open_checker(args))
        return loaded[0]

    def say(line: str) -> None:
        bar.finish()
        print(f"studio: {line}", file=sys.stderr, flush=True)

    def heard(h: Any) -> None:
        words = h.summary.words() if h.summary is not None else "nothing to hear"
        say(f'chapter {h.chapter + 1} "{names.get(h.chapter, "")}" heard back: {words}')

    device = choose_device(args.asr_device, cuda_devices() if args.asr_device != "cpu" else 0)[0]
    return ChapterProofer(project, checker, overlap=overlaps(device), heard=heard,
                          rendered=lambda c: say(f'chapter {c + 1} "{names.get(c, "")}" rendered'))


def proof_after_render(args: argparse.Namespace, project: Any, chapters: list[int], proofer: Any, engine: Any,
                       engine_for: Any, batch_size: int) -> int:
    """After ``studio render --proof``: new takes of the glitches the chapters' proofs found; exit status."""
    from studio.project.proofs import chapter_summaries
    from studio.rendering.proofing import ProofRun, retry_glitches

    retried = improved = 0
    if proofer.verdicts and args.retry > 0:
        retried, improved = retry_glitches(project, proofer.checker(), proofer.verdicts, engine, retry=args.retry,
                                           engine_for=engine_for, batch_size=batch_size)
    run = ProofRun(len(proofer.verdicts), retried, improved, chapter_summaries(project, set(chapters)))
    return report_project(project, run, set(chapters), as_json=False)


def run_proof(project: Any, checker: Any, chapters: set[int] | None, args: argparse.Namespace, *,
              again: bool = False, engine: Any = None, engine_for: Any = None, batch_size: int = 1) -> Any:
    """Proof the chapters with a progress line; retries build the project's engine when none is given."""
    from studio.rendering.proofing import proof_project

    bar = ProgressLine(sys.stderr, label="listening")
    owned = None
    try:
        if engine is None and args.retry > 0:
            from studio.stack.build import build_engine, plan_for_project, voice_engines

            plan = plan_for_project(project.settings(), isolation=None)
            owned, engine_for, batch_size = build_engine(plan), voice_engines(plan), plan.batch_size
            engine = owned
        return proof_project(project, checker, chapters=chapters, again=again, retry=args.retry, engine=engine,
                             engine_for=engine_for, batch_size=batch_size,
                             progress=lambda p: bar(_as_render_progress(p)))
    finally:
        bar.finish()
        if owned is not None:
            owned.close()


def _as_render_progress(p: Any) -> Any:
    from studio.rendering.render import RenderProgress

    return RenderProgress(done=p.done, total=p.total, failed=0, audio_seconds=p.audio_seconds, elapsed=0.0,
                          rtf=0.0, eta=None, current=f"proof-listening: {p.flagged} to review")


def report_project(project: Any, run: Any, chapters: set[int] | None, *, as_json: bool) -> int:
    """Print each chapter's summary, the flagged sentences and the book's line (the Proof dock's
    words, :func:`studio.project.proofs.book_words`); the exit status."""
    from studio.project.proofs import book_words
    from studio.rendering.proofing import flagged_rows

    flagged = flagged_rows(project, chapters)
    names = {c.index: c.name for c in project.chapters()}
    if as_json:
        print(json.dumps([_row_json(row, rec) for row, rec in flagged], ensure_ascii=False, indent=1))
    else:
        for idx, summary in run.summaries.items():
            print(f'chapter {idx + 1} "{names.get(idx, "")}": {summary.words()}')
        for row, rec in flagged:
            print(f"chapter {row.chapter + 1}, sentence {row.index + 1} (id {row.id}): {'; '.join(rec.reasons)}")
            print(f"    expected: {row.text}")
            print(f"    heard:    {rec.heard}")
        extra = f"; {run.retried} new take(s), {run.improved} better" if run.retried else ""
        print(f"{run.checked} sentence(s) listened to{extra}; {len(flagged)} need listening")
        print(f"Proof-listening: {book_words(run.summaries)}")
    return EXIT_INCOMPLETE if flagged else 0


def _row_json(row: Any, rec: Any) -> dict[str, object]:
    return {"chapter": row.chapter + 1, "index": row.index + 1, "id": row.id, "text": row.text, "heard": rec.heard,
            "reasons": rec.reasons, "severity": rec.severity, "score": rec.score,
            "flags": [f.to_dict() for f in rec.flags]}


def _recording(args: argparse.Namespace) -> int:
    from studio.proof.recording import proof_recording, read_sentences

    require_file(args.audio)
    require_file(args.text)
    sentences = read_sentences(args.text)
    if not sentences:
        raise StudioError(f"{args.text} holds no sentences")
    cues = None
    if args.subtitles:
        from studio.audio.subtitles import parse_cues

        require_file(args.subtitles)
        try:
            cues = parse_cues(args.subtitles.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, ValueError) as err:
            raise StudioError(f"cannot read the subtitles {args.subtitles}: {err}") from err
        if not cues:
            raise StudioError(f"{args.subtitles} holds no subtitles")
    checker = open_checker(args)
    verdicts = proof_recording(checker, args.audio, sentences, args.language, cues, own_render=cues is not None)
    checker.loaded()
    flagged = [v for v in verdicts if v.record.needs_listening]
    if args.json:
        print(json.dumps([{"chapter": 1, "index": v.index + 1, "text": v.text, "heard": v.record.heard,
                           "reasons": v.record.reasons, "severity": v.record.severity, "score": v.record.score,
                           "status": v.record.status, "start": v.start, "end": v.end} for v in verdicts],
                         ensure_ascii=False, indent=1))
    else:
        for v in verdicts:
            mark = "; ".join(v.record.reasons) if v.record.needs_listening else v.record.status
            print(f"{v.index + 1:4d} {v.start:8.2f}-{v.end:8.2f} s  {mark}: {v.text[:70]}")
        print(f"{len(verdicts)} sentence(s), {len(flagged)} need listening")
    return EXIT_INCOMPLETE if flagged else 0
