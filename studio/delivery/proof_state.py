"""The proof-listening state where a book is delivered: manifest, ACX report, ``--require-proof``.

Why at delivery: a platform's reviewer asks whether the book was proof-listened,
and a producer wants the export to refuse a chapter that still has sentences to
review, rather than find out from a listener. The summary is written into the
manifest the publish step made (a separate key, so the publish code stays as it
is) and printed with the ACX report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from studio.audio.pcm import atomic_write_bytes
from studio.core.errors import StudioError
from studio.project.proofs import book_total, book_words, chapter_summaries
from studio.project.store import Project


def require_proof(project: Project, chapters: Sequence[int]) -> None:
    """StudioError naming every chapter with sentences not proof-listened or still to review."""
    summaries = chapter_summaries(project, chapters)
    bad = [f"chapter {idx + 1}: {s.words()}" for idx, s in summaries.items()
           if not s.resolved or s.unchecked or s.heard == 0]
    if bad:
        raise StudioError("--require-proof: not every chapter is proof-listened and resolved ("
                          + "; ".join(bad) + "); run `studio proof` and review or mark the flagged sentences")


def proof_report(project: Project, chapters: Sequence[int]) -> dict[str, object]:
    """The book's and each chapter's proof summary, as written into ``manifest.json``: the counts as
    numbers, and the words the Proof dock and ``studio proof`` say (:func:`~studio.project.proofs.book_words`)."""
    summaries = chapter_summaries(project, chapters)
    names = {c.index: c.name for c in project.chapters()}
    return {"summary": book_words(summaries), **book_total(summaries.values()).to_dict(),
            "chapters": [{"chapter": idx + 1, "title": names.get(idx, ""), "summary": s.words(), **s.to_dict()}
                         for idx, s in summaries.items()]}


def add_to_manifest(manifest: Path, report: dict[str, object]) -> None:
    """Put the proof report into an existing ``manifest.json`` under ``"proof"``."""
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    doc["proof"] = report
    atomic_write_bytes(manifest, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def report_text(report: dict[str, object]) -> str:
    """The proof section of the printed ACX report."""
    lines = [f"Proof-listening: {report['summary']}"]
    for ch in report["chapters"]:  # type: ignore[union-attr]
        lines.append(f"    chapter {ch['chapter']} {ch['title']}: {ch['summary']}")
    return "\n".join(lines)
