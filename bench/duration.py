"""Duration estimates against exported chapters of real books, and the voice's rate.

Why a script: measuring needs minutes of synthesis. It renders a few chapters of
the shared EPUB fixtures with the bundled voice (in kept project folders, so a
second run only exports), exports them, and prints per chapter the exported
length next to

* the estimate before anything was rendered (the voice's measured rate from
  ``studio/project/speaking_rates.json``, the project's pauses), and
* the estimate calibrated on the *other* chapters rendered in that book (what a
  producer sees for a chapter not rendered yet once some are),

with the error of each. ``--fit`` prints the least-squares rate (seconds per
sentence and per spoken character) over every rendered sentence: the figures to
put in ``speaking_rates.json`` for the voice.

    python bench/duration.py [--keep DIR] [--fit]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

EPUBS = REPO.parent / "shared" / "fixtures" / "epub"
#: book -> 0-based chapters rendered: prose (stories), numbers-heavy prose (an
#: encyclopedia article) and verse
PLAN = {"childrens-literature": (4, 5, 6, 7, 8, 9, 10), "georgia-pls-ssml": (1, 3, 5, 8), "wasteland": (1, 4)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", type=Path, help="folder for the projects and exports (default: a temp folder)")
    ap.add_argument("--fit", action="store_true", help="print the least-squares rate over the rendered sentences")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    from studio.engine.presets import open_preset
    from studio.engine.voice.catalog import get_voice
    from studio.delivery.export import export_chapter_files
    from studio.rendering.render import render_project
    from studio.project.opening import open_project
    from studio.project.bookdb import heading_paragraph
    from studio.project.duration import Timing, calibrated, chapter_seconds, voice_rate
    from studio.text.spoken_length import spoken_chars

    folder = args.keep or Path(tempfile.mkdtemp(prefix="duration-bench-"))
    engine = open_preset("fp32-cpu", get_voice(None))
    engine.load()
    sentences: list[tuple[str, float]] = []
    errors: list[tuple[float, float]] = []
    print(f"{'chapter':44s} {'exported':>9s} {'estimate':>9s} {'error':>7s} {'calibr.':>9s} {'error':>7s}")
    for name, chapters in PLAN.items():
        project = open_project(EPUBS / f"{name}.epub", folder=folder / f"{name}.studio").project
        try:
            render_project(project, engine, chapters=set(chapters))
            files = {f.chapter: f for f in export_chapter_files(project, folder / f"{name}.out", "wav", chapters)}
            settings = project.settings()
            book = project.book()
            rows = project.sentences(chapters)
            rate = voice_rate(settings.voice_id)
            ls = settings.synthesis.length_scale
            for ci in chapters:
                mine = [replace(r, state="pending") for r in rows if r.chapter == ci]
                others = [(r.text, r.duration) for r in rows if r.chapter != ci and r.duration]
                heading = heading_paragraph(book.chapters[ci])
                plain = chapter_seconds(mine, heading, Timing(rate, ls, settings.pauses))
                tuned = chapter_seconds(mine, heading, Timing(calibrated(rate, others, ls), ls, settings.pauses))
                real = files[ci].duration
                errors.append((plain / real - 1.0, tuned / real - 1.0))
                title = f"{name} {ci + 1} {book.chapters[ci].title}"[:44]
                print(f"{title:44s} {real:8.1f}s {plain:8.1f}s {errors[-1][0]:+7.1%} {tuned:8.1f}s {errors[-1][1]:+7.1%}")
            sentences += [(r.text, r.duration) for r in rows if r.duration]
        finally:
            project.close()
    engine.close()
    worst = max(abs(e[0]) for e in errors), max(abs(e[1]) for e in errors)
    print(f"worst error: {worst[0]:.1%} from the voice's rate, {worst[1]:.1%} calibrated on the book's other chapters")
    if args.fit:
        import numpy as np

        x = np.array([spoken_chars(t) for t, _ in sentences], float)
        y = np.array([d for _, d in sentences], float)
        (per_sentence, per_char), *_ = np.linalg.lstsq(np.vstack([np.ones_like(x), x]).T, y, rcond=None)
        print(f"fit over {len(y)} sentences ({y.sum() / 60:.0f} min): "
              f'"per_sentence": {per_sentence:.3f}, "per_char": {per_char:.4f}')
    return 0 if worst[0] <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
