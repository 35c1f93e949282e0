"""Reading a 9,000-sentence book's renditions: the first read, the second, and after a change.

Why a script and not a timed test: a millisecond figure means something only on a
quiet machine, repeated; the tests check that a second read computes nothing and
that nothing is computed on the GUI thread. This builds a real project from real
prose (the shared EPUBs' English chapters, repeated under new chapter titles until
the book has ``--sentences`` sentences: their numbers, abbreviations and names go
through the normaliser as a novel's would) and times ``Project.sentences()``:

* the first read (every rendition computed: spoken form, lexicon entries, key),
* the second read (nothing changed: the kept rows),
* after a render's bookkeeping (one sentence marked done): its chapter's read (that
  chapter's rows joined), then the whole book's (every row joined again),
* after an edit (one sentence's rendition computed again, the rows joined again),
* after a change of the project's pauses (no rendition computed).

    python bench/renditions.py [--sentences 9000] [--runs 5]

Prints medians over ``--runs`` (the first read: once, it happens once per process).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

EPUBS = REPO.parent / "shared" / "fixtures" / "epub"
SOURCES = ("childrens-literature.epub", "georgia-pls-ssml.epub", "wasteland.epub")


def book(sentences: int):  # -> studio.core.types.Book
    """The EPUBs' prose chapters, repeated until the book holds ``sentences`` sentences."""
    from studio.core.types import Book
    from studio.text.importer import load_manuscript

    prose = []
    for name in SOURCES:
        prose += [c for c in load_manuscript(EPUBS / name).chapters if not c.front_matter and c.word_count > 50]
    chapters, total, copy = [], 0, 0
    while total < sentences:
        copy += 1
        for c in prose:
            chapters.append(replace(c, title=f"{c.title} ({copy})"))
            total += 1 + sum(len(p.sentences) for p in c.paragraphs)
            if total >= sentences:
                break
    return Book(title="A Long Book", author="Various", language="en", chapters=tuple(chapters), source="bench")


def timed(fn) -> float:  # noqa: ANN001
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=9000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    from studio.audio.assemble import Pauses
    from studio.engine.voice.catalog import get_voice
    from studio.project.cache import CacheEntry
    from studio.project.opening import new_project_settings
    from studio.project.store import Project

    folder = Path(tempfile.mkdtemp(prefix="renditions-bench-")) / "long.studio"
    project = Project.create(folder, book(args.sentences), new_project_settings(get_voice(None)))
    first = timed(project.sentences)
    rows = project.sentences()
    print(f"book: {len(rows):,} sentences; first read {first:.0f} ms")
    second = [timed(project.sentences) for _ in range(args.runs)]
    marked_chapter, marked, edited, paused = [], [], [], []
    for n in range(args.runs):
        row = rows[10 + n]
        project.mark_done(row.id, CacheEntry(row.expected_key, "0" * 64, 1, 22050, 1.0), synthesized=False)
        marked_chapter.append(timed(lambda: project.sentences([row.chapter])))  # noqa: B023 - called at once
        marked.append(timed(project.sentences))
        project.edit_sentence(rows[100 + n].id, rows[100 + n].text + " Again.")
        edited.append(timed(project.sentences))
        project.update_settings(project.settings().with_changes(pauses=Pauses(sentence=0.3 + n / 10)))
        paused.append(timed(project.sentences))
    for label, values in (("second read", second), ("its chapter, one rendered", marked_chapter),
                          ("after one sentence rendered", marked),
                          ("after one sentence edited", edited), ("after a change of pauses", paused)):
        print(f"{label:28s} median {statistics.median(values):7.1f} ms, max {max(values):7.1f} ms")
    project.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
