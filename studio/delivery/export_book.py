"""One export for both faces: the command line's ``studio export`` and the app's Export dialog.

Why one function: the two used to differ -- the app's ``manifest.json`` had no proof
summary and the app never said that sentences were still flagged, while the command
line did both. Everything an export does beyond :func:`studio.delivery.publish.publish`
(the ``--require-proof`` refusal, the proof report in the manifest, the credits'
text as it will be spoken) lives here, and both faces call it with the same
:class:`~studio.delivery.publish.PublishOptions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from pathlib import Path

from studio.core.errors import StudioError
from studio.engine.base import Engine
from studio.delivery.credits import Credits
from studio.delivery.export import default_chapters
from studio.delivery.proof_state import add_to_manifest, proof_report, require_proof
from studio.delivery.publish import PublishOptions, PublishProgress, PublishResult, book_meta, credits_text, publish
from studio.project.proofs import ProofSummary, book_total, book_words, chapter_summaries
from studio.project.store import Project

#: the line between the opening and the closing credits in their text form
CREDITS_SEPARATOR = "---"


@dataclass(frozen=True)
class BookExport:
    """What an export wrote (``result``) and the book's proof state at that moment (``proof``,
    as written into ``manifest.json`` under "proof")."""

    result: PublishResult
    proof: dict[str, object]


@dataclass(frozen=True)
class ProofBefore:
    """The exported chapters' proof state (chapter index -> summary), said before an export in
    the Proof dock's words."""

    summaries: Mapping[int, ProofSummary]

    @property
    def book(self) -> ProofSummary:
        return book_total(self.summaries.values())

    @property
    def clean(self) -> bool:
        return all(s.all_passed for s in self.summaries.values())

    def line(self) -> str:
        """"184 to review in 6 chapters; 135 chapters not listened yet", as the Proof dock says it."""
        return book_words(self.summaries)


def proof_before(project: Project, chapters: Sequence[int] | None) -> ProofBefore:
    """The proof state of the chapters an export would write (None: the default chapters)."""
    wanted = list(chapters) if chapters is not None else default_chapters(project)
    return ProofBefore(chapter_summaries(project, wanted))


def export_book(project: Project, out_dir: str | Path, options: PublishOptions, *, require: bool = False,
                progress: Callable[[PublishProgress], None] | None = None,
                engine: Engine | None = None) -> BookExport:
    """Refuse when ``require`` and a chapter is not proof-listened and resolved; publish; put the
    proof report into the manifest."""
    wanted = sorted(set(options.chapters)) if options.chapters is not None else default_chapters(project)
    if require:
        require_proof(project, wanted)
    result = publish(project, out_dir, options, progress=progress, engine=engine)
    proof = proof_report(project, wanted)
    add_to_manifest(result.manifest, proof)
    return BookExport(result, proof)


def spoken_credits(project: Project, options: PublishOptions) -> Credits:
    """The credits as an export with ``options`` would speak them."""
    return credits_text(project, options, book_meta(project, options))


def credits_as_text(credits: Credits) -> str:
    """The credits' text form (``--credits-text`` prints it, and reads it back edited)."""
    return f"{credits.opening}\n{CREDITS_SEPARATOR}\n{credits.closing}\n"


def credits_from_text(text: str) -> Credits:
    """The opening and closing credits from their text form (a line ``---`` between them)."""
    lines = text.splitlines()
    if CREDITS_SEPARATOR not in (ln.strip() for ln in lines):
        raise StudioError(f"the credits' text needs a line '{CREDITS_SEPARATOR}' between the opening and the "
                          "closing credits")
    cut = next(i for i, ln in enumerate(lines) if ln.strip() == CREDITS_SEPARATOR)
    return Credits("\n".join(lines[:cut]).strip(), "\n".join(lines[cut + 1:]).strip())


__all__ = ["BookExport", "CREDITS_SEPARATOR", "ProofBefore", "credits_as_text", "credits_from_text", "export_book",
           "proof_before", "spoken_credits"]
