"""Proof-listening in the desktop app: each chapter heard as its render ends, and its findings as values.

Why chapter by chapter inside the render job: a producer should read a chapter's proof minutes
after its render, not after the book. The render worker hands each finished chapter over
(:class:`~studio.rendering.proofing.ChapterProofer`): with cores to spare it is heard while the next
chapter renders, on two cores before the next starts, and either way the next chapter is not
reported rendered before it has its verdicts. After every job a background listener checks
whatever is still unheard (a sentence edited, a new take), stepping aside while a render runs.
The recogniser is loaded once, on first use.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtCore import QCoreApplication, QObject, Signal

from studio.project.numbering import sentence_numbers
from studio.project.proofs import ProofFlag, book_words, chapter_summaries, mark_fine
from studio.project.store import Project
from studio.desktop.messages import ListeningState
from studio.desktop.tasks import TaskRunner, describe_error

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProofEntry:
    """One flagged sentence as the dock lists it."""

    sentence_id: int
    chapter: int
    number: int  # in its chapter, 1-based (studio.project.numbering.sentence_numbers); 0: the chapter's title
    text: str
    heard: str
    severity: int
    score: float
    flags: tuple[ProofFlag, ...]

    @property
    def reason(self) -> str:
        return "; ".join(f.reason for f in self.flags)

    @property
    def advice(self) -> str:
        """What to do, in plain words, for the kinds of flag this sentence has."""
        kinds = {f.kind for f in self.flags}
        if "symbol" in kinds:
            return ("The voice read a symbol's name aloud, and a new take will say it again: write what should be "
                    "said in the sentence's spoken form (or leave the symbol out), or mark it as fine.")
        if kinds == {"pronunciation"}:
            return ("The voice said what it was given, so a new take will not change it: add a pronunciation "
                    "for the word, or edit the sentence's spoken form.")
        if kinds & {"substituted", "pronunciation"}:
            return "Listen: if the word is said wrong, add a pronunciation; if it sounds right, mark it as fine."
        return "Listen: if it sounds wrong, re-render it as a new take; if it sounds right, mark it as fine."

    @property
    def retake_helps(self) -> bool:
        """A new take can change it (not when only the phonemes the voice was given are in doubt)."""
        return any(f.kind not in ("pronunciation", "symbol") for f in self.flags)

    @property
    def word(self) -> str:
        """The expected word a pronunciation entry would be for: the longest one the recogniser
        did not hear (names and rare words are long; "the" and "his" are heard)."""
        for f in self.flags:
            if f.kind == "pronunciation":
                return f.expected
            missed = [w for w in f.expected.split() if w not in set(f.heard.split())]
            if missed:
                return max(missed, key=len)
        return ""


#: the dock before anything was heard: the book's words, and what to do
NOT_LISTENED = f"{book_words({})}: render a chapter, or press Listen now."


@dataclass(frozen=True)
class ProofView:
    """The book's proof state: flagged sentences worst first, each chapter's state in a few words
    (:meth:`ProofSummary.words`) and the book's in one line (:func:`book_words`): the words
    ``studio proof``, the export report and the manifest say too."""

    folder: str
    entries: tuple[ProofEntry, ...]
    chapters: tuple[tuple[int, str], ...]  # (chapter index, "4 to review; 50 of 54 heard and passed")
    book: str = NOT_LISTENED
    listening: bool = False


def proof_view(project: Project) -> ProofView:
    """Read the verdicts (off the GUI thread)."""
    from studio.rendering.proofing import flagged_rows

    numbers = sentence_numbers(project.sentences())
    entries = tuple(ProofEntry(row.id, row.chapter, numbers[row.id], row.text, rec.heard, rec.severity, rec.score,
                               rec.flags) for row, rec in flagged_rows(project))
    summaries = chapter_summaries(project)
    lines = tuple((idx, s.words()) for idx, s in summaries.items())
    # the book's line over the chapters the book reads (as `studio proof` and the export count them)
    included = set(project.chapter_control.included())
    book = {idx: s for idx, s in summaries.items() if idx in included}
    return ProofView(str(project.folder), entries, lines, book_words(book) if book else NOT_LISTENED)


class ProofController(QObject):
    """Runs proof-listening for a :class:`~studio.desktop.session.ProjectSession`'s project.

    Two ways in: each chapter as soon as a render job has finished it (the session's ``after_chapter``,
    on the render worker's thread: :class:`~studio.rendering.proofing.ChapterProofer`, heard while the
    next chapter renders, or before it on two cores), and after every job whatever is still unheard.
    """

    viewChanged = Signal(object)  # ProofView
    progress = Signal(object)  # studio.proof.sentences.ProofProgress
    failed = Signal(str)
    chapterHeard = Signal(object)  # studio.rendering.proofing.ChapterHeard
    #: what is being heard now (ListeningState), None when nothing is: the queue's and the readouts' words
    listening = Signal(object)
    _relay = Signal(object)  # (ChapterHeard, ProofView) from the hearing thread to the GUI thread

    def __init__(self, session: Any, parent: QObject | None = None, *,
                 open_checker: Callable[[], Any] | None = None, synchronous: bool = False) -> None:
        super().__init__(parent)
        self.session = session
        self.tasks = TaskRunner(self, threads=1, synchronous=synchronous,
                                on_error=lambda e: self.failed.emit(e.message))
        self._open_checker = open_checker
        self._checker: Any = None
        self._running = False
        self._again = False
        self._stop = False
        self.auto = True  # listen after every finished render job (the dock's check box)
        self._loading = threading.Lock()
        self._proofer: Any = None  # studio.rendering.proofing.ChapterProofer of the open project
        self._relay.connect(self._heard)
        session.after_chapter = self.chapter_rendered
        session.opened.connect(lambda _snap: self.refresh())
        session.jobFinished.connect(lambda _job: self.listen() if self.auto else None)
        session.closed.connect(self._closed)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    def _should_stop(self) -> bool:
        """Between batches: the project closed, the app quits, or a render runs (rendering comes first)."""
        return self._stop or bool(self.session.stats.rendering)

    def _closed(self) -> None:
        self._stop = True
        self._close_proofer()
        self.viewChanged.emit(ProofView("", (), ()))

    def shutdown(self) -> None:
        """Stop listening at the next batch and wait for it (the app is quitting)."""
        self._stop = True
        self._close_proofer()
        self.tasks.wait()

    def _close_proofer(self) -> None:
        proofer, self._proofer = self._proofer, None
        if proofer is not None:
            proofer.close()

    def checker(self) -> Any:
        with self._loading:  # the chapter hearing thread and the task thread may both ask first
            if self._checker is None:
                if self._open_checker is not None:
                    self._checker = self._open_checker()
                else:
                    from studio.proof.check import Checker

                    self._checker = Checker.open()
            return self._checker

    def chapter_rendered(self, chapter: int) -> None:
        """On the render worker's thread: hear the finished chapter (the chapter before it heard first)."""
        project = self.session.project
        if not self.auto or project is None:
            return
        if self._proofer is None or self._proofer.project is not project:
            from studio.rendering.proofing import ChapterProofer, overlaps

            self._stop = False
            self._proofer = ChapterProofer(project, self.checker, overlap=overlaps(self.checker().choice.device),
                                           heard=lambda h: self._relay.emit((h, proof_view(project))),
                                           should_stop=lambda: self._stop, progress=self._chapter_progress)
        try:
            self._proofer(chapter)
        except Exception as exc:  # noqa: BLE001 - a missing speech model must not fail the render job
            self._relay.emit(exc)

    def _heard(self, value: Any) -> None:
        self.listening.emit(None)
        if isinstance(value, Exception):
            self.failed.emit(describe_error(value, "proof-listen").message)
            return
        heard, view = value
        self._show(view)
        self.chapterHeard.emit(heard)

    def refresh(self) -> None:
        project = self.session.project
        if project is not None:
            self.tasks.run(lambda: proof_view(project), on_done=self._show, action="read the proof results")

    def listen(self) -> None:
        """Listen to every rendered sentence without a verdict (in the background, below rendering)."""
        project = self.session.project
        if project is None:
            return
        if self._running:
            self._again = True
            return
        self._running = True
        self._stop = False

        def work(report: Callable[[Any], None]) -> ProofView:
            from studio.proof.sentences import check_rows, to_check

            if self._proofer is not None:
                self._proofer.wait()  # the last chapter the job handed over is being heard

            rows = to_check(project, project.sentences())
            if rows:
                check_rows(project, self.checker(), rows, progress=report, should_stop=self._should_stop)
            return proof_view(project)

        self.tasks.run(work, on_done=self._listened, on_progress=self._progressed, on_error=self._failed,
                       action="proof-listen")

    def _chapter_progress(self, p: Any) -> None:  # ProofProgress of one chapter, on the proof thread
        self.progress.emit(p)
        self.listening.emit(ListeningState(p.chapter, p.chapter_done, p.chapter_total))

    def _progressed(self, p: Any) -> None:  # studio.proof.sentences.ProofProgress, on the GUI thread
        self.progress.emit(p)
        self.listening.emit(None if p.stopped else ListeningState(None, p.done, p.total))

    def _failed(self, error: Any) -> None:  # ErrorInfo: a missing speech model, a damaged project
        self._running = self._again = False
        self.listening.emit(None)
        self.failed.emit(error.message)

    def _listened(self, view: ProofView) -> None:
        self._running = False
        self.listening.emit(None)
        self._show(view)
        if self._again:
            self._again = False
            self.listen()

    def mark_fine(self, sentence_id: int) -> None:
        project = self.session.project
        if project is not None:
            self.tasks.run(lambda: (mark_fine(project.db, sentence_id), proof_view(project))[1], on_done=self._show,
                           action="mark the sentence as fine")

    def _show(self, view: ProofView) -> None:
        project = self.session.project
        if project is not None and view.folder == str(project.folder):
            self.viewChanged.emit(view)
