"""One open project and everything that works on it, behind one QObject.

Why a session object between the window and the workers: widgets should only
say what the user wants ("render chapter 3", "this paragraph is French") and
show what comes back. The session turns wishes into background tasks (project
I/O on a one-thread :class:`~studio.desktop.tasks.TaskRunner`, so changes keep their
order), render jobs (the :class:`~studio.desktop.render_worker.RenderWorker`'s
queue) and previews, and re-emits every result as a frozen value. Tests drive it
exactly like the window does.

Opening another project never blocks: the old worker is asked to stop and its
project is closed when the thread has finished.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, Signal

from studio.core.words import counted
from studio.audio.assemble import Pauses
from studio.core.errors import StudioError, VoiceError
from studio.core.language import language_family
from studio.stack.build import EngineBuilder, Isolation, build_engine, effective_preset
from studio.stack.preset_choice import with_default_preset
from studio.project.opening import Opened, open_project
from studio.project.numbering import chapters_label
from studio.project.queue_state import StoredQueue, load_queue
from studio.project.render_speed import seconds_per_sentence
from studio.project.settings import ProjectSettings
from studio.project.store import Project
from studio.desktop.chapter_edits import ChapterEdits
from studio.desktop.exporting import BookExports
from studio.desktop.history import EditHistory
from studio.desktop.facts import read_bench
from studio.desktop.jobqueue import JobQueue
from studio.desktop.messages import ErrorInfo, JobSpec, StateDelta
from studio.desktop.queue_keeper import QueueKeeper, restore_queue
from studio.desktop.monitor import MonitorThread, RenderStats, StallMeter
from studio.desktop.planning import BookPlan, book_chapters, is_small_selection, plan_book
from studio.desktop.preview import PreviewController, SinkFactory
from studio.desktop.render_worker import RenderWorker
from studio.desktop.lookups import BookSearch, WaveformLoader
from studio.desktop.sinks import SoundDeviceSink
from studio.desktop.snapshot import (
    BookSnapshot,
    ChapterNode,
    SentenceNode,
    apply_states,
    build_chapter,
    build_snapshot,
    estimate_change,
    with_long_chapters,
)
from studio.desktop.takes import TakeCommands
from studio.desktop.tasks import OnError, TaskRunner

log = logging.getLogger(__name__)


class ProjectSession(QObject, ChapterEdits, TakeCommands, EditHistory):
    opened = Signal(object)  # BookSnapshot
    closed = Signal()
    snapshotChanged = Signal(object)  # BookSnapshot
    chapterChanged = Signal(object)  # ChapterNode
    statesChanged = Signal(object)  # StateDelta
    queueChanged = Signal(object)  # QueueSnapshot
    jobFinished = Signal(object)  # JobState
    readout = Signal(object)  # Readout
    engineStatus = Signal(object)  # EngineStatus
    settingsChanged = Signal(object)  # ProjectSettings
    takesChanged = Signal(object)  # TakeList
    waveformReady = Signal(object)  # WaveformData
    searchReady = Signal(object)  # SearchResult
    historyChanged = Signal(object)  # (what Undo would undo, what Redo would redo): labels or None
    error = Signal(object)  # ErrorInfo
    message = Signal(str)

    def __init__(self, parent: QObject | None = None, *, build: EngineBuilder = build_engine,
                 isolation: Isolation | None = Isolation(), sink_factory: SinkFactory | None = SoundDeviceSink, long_chapter_minutes: float = 60.0,
                 readout_interval: float = 1.0) -> None:
        super().__init__(parent)
        self.build = build
        self.isolation = isolation
        self.long_chapter_minutes = long_chapter_minutes
        self.tasks = TaskRunner(self, threads=1, on_error=self.error.emit)
        self.exports = BookExports(self, lambda: (self._need(), self._snap()), self.error.emit)
        self.waveforms = WaveformLoader(self, self.waveformReady.emit, lambda: self.project, self.error.emit)
        self.finder = BookSearch(self, self.searchReady.emit, self.error.emit)
        self._text_version = 0  # bumped by every change of the book's text: the search index follows it
        self.stats = RenderStats()
        self.stall = StallMeter(self)
        self.stall.start()
        self.monitor = MonitorThread(self.stats, readout_interval, self.stall)
        self.monitor.readout.connect(self.readout)
        self.monitor.start()
        self.preview = PreviewController(sink_factory, self)
        self.project: Project | None = None
        self.queue: JobQueue | None = None
        self.worker: RenderWorker | None = None
        #: called on the render worker's thread once a chapter has nothing left to render (proof-listening's
        #: :class:`~studio.rendering.proofing.ChapterProofer`); a render job waits while it runs
        self.after_chapter: Callable[[int], None] | None = None
        self.keeper: QueueKeeper | None = None
        self.queueChanged.connect(lambda _snap: self.keeper is not None and self.keeper.changed())
        self.snapshot: BookSnapshot | None = None
        self.settings: ProjectSettings | None = None
        self._retiring: list[tuple[RenderWorker, Project]] = []
        self._shut = False
        app = QCoreApplication.instance()
        if app is not None:  # threads must be stopped before Qt tears down, even without a window
            app.aboutToQuit.connect(self.shutdown)

    # ------------------------------------------------------------ open / close

    def open_path(self, path: str | Path, on_done: Callable[[BookSnapshot], None] | None = None) -> None:
        self.message.emit(f"Opening {Path(path).name}\u2026")
        self._load(lambda: open_project(path), on_done)

    def create(self, manuscript: str | Path, folder: str | Path, *, progress: Callable[[str, int, int], None] | None = None,
               on_done: Callable[[BookSnapshot], None] | None = None, on_error: OnError | None = None) -> None:
        """Import into ``folder`` (``progress``: studio.text.importer.ImportProgress); the open book closes at once."""
        self.message.emit(f"Importing {Path(manuscript).name}\u2026")
        self.close_project()
        self._load(lambda: open_project(manuscript, folder=folder, progress=progress), on_done, on_error)

    def _load(self, opener: Callable[[], Opened], on_done, on_error: OnError | None = None) -> None:  # noqa: ANN001
        minutes = self.long_chapter_minutes

        def work():
            opened = opener()
            project, action = opened.project, opened.action
            try:
                settings = project.settings()
                if (named := _with_default_preset(project, settings)) != settings:
                    project.update_settings(settings := named)
                measured = seconds_per_sentence(project.db, effective_preset(settings).name, settings.voice_id)
                return (project, action, build_snapshot(project, long_chapter_minutes=minutes), settings,
                        load_queue(project.db), measured)
            except BaseException:
                project.close()
                raise

        def done(value) -> None:
            project, action, snapshot, settings, stored, measured = value
            self.stats.seed(measured)  # the time left is known from the first look, not after a render
            self._install(project, snapshot, settings, stored)
            self.message.emit(f"{action.capitalize()} project {project.folder}")
            if on_done is not None:
                on_done(snapshot)

        self.tasks.run(work, on_done=done, on_error=on_error, action="open the project")

    def _install(self, project: Project, snapshot: BookSnapshot, settings: ProjectSettings,
                 stored: StoredQueue = StoredQueue()) -> None:
        self.close_project()
        self.project, self.snapshot, self.settings = project, snapshot, settings
        self._text_version += 1
        self.queue = JobQueue()
        if restore_queue(self.queue, stored):
            self.message.emit(f"Render queue restored: {counted(len(stored.jobs), 'job')}{', paused' if stored.paused else ''}")
        self.keeper = QueueKeeper(project, self.queue, self.tasks)
        self.worker = RenderWorker(project, self.queue, self.stats, self.preview.player,
                                   build=self.build, isolation=self.isolation)
        w = self.worker
        w.after_chapter = lambda chapter: self.after_chapter(chapter) if self.after_chapter is not None else None
        w.queueChanged.connect(self.queueChanged)
        w.statesChanged.connect(self._states)  # the snapshot first, so listeners never see it behind
        w.statesChanged.connect(self.statesChanged)
        w.jobFinished.connect(self.jobFinished)
        w.engineStatus.connect(self.engineStatus)
        w.failed.connect(self.error)
        w.start()
        self.preview.attach(project, self.queue, self.voice_for, settings.pauses)
        self.queueChanged.emit(self.queue.snapshot())
        self.opened.emit(snapshot)
        self.settingsChanged.emit(settings)
        self.read_history()  # what Edit > Undo would undo, from the project's own history

    def close_project(self) -> None:
        """Stop the worker (asynchronously) and close the project when it has stopped."""
        if self.project is None:
            return
        self.preview.detach()
        worker, project = self.worker, self.project
        if self.keeper is not None:
            self.keeper.save_now()  # the queue comes back when the project is opened again
        self.project = self.queue = self.worker = self.keeper = None
        self.snapshot = self.settings = None
        if worker is not None:
            worker.queue.quit()
            entry = (worker, project)
            self._retiring.append(entry)
            worker.finished.connect(lambda: self._retired(entry))
            if worker.isFinished():
                self._retired(entry)
        else:
            project.close()
        self.closed.emit()

    def _retired(self, entry: tuple[RenderWorker, Project]) -> None:
        if entry in self._retiring:
            self._retiring.remove(entry)
            entry[1].close()

    def shutdown(self, timeout_ms: int = 15000) -> None:
        """App exit: stop everything and wait (the only blocking call, made once)."""
        if self._shut:
            return
        self._shut = True
        self.close_project()
        self.preview.close()
        self.monitor.stop()
        self.stall.stop()
        for worker, _project in list(self._retiring):
            worker.wait(timeout_ms)
        for entry in list(self._retiring):
            self._retired(entry)
        self.monitor.wait(3000)
        self.tasks.wait()
        self.finder.wait()
        self.exports.wait()
        self.waveforms.wait()

    # ------------------------------------------------------------ reading

    def voice_for(self, language: str) -> str:
        settings = self.settings
        if settings is None:
            return ""
        family = language_family(language) or language.lower()
        return settings.language_voices.get(family) or settings.voice_id

    def refresh(self) -> None:
        project, minutes = self._need(), self.long_chapter_minutes
        self.tasks.run(lambda: build_snapshot(project, long_chapter_minutes=minutes), on_done=self._set_snapshot,
                       action="refresh the book")

    def _set_snapshot(self, snapshot: BookSnapshot) -> None:
        if self.project is not None and snapshot.folder == str(self.project.folder):
            before, self.snapshot = self.snapshot, snapshot
            self._text_version += 1
            self.snapshotChanged.emit(snapshot)
            why = estimate_change(before, snapshot)
            if why:
                self.message.emit(why)

    def set_long_chapter_minutes(self, minutes: float) -> None:
        """New long-chapter threshold: flags and banner recomputed from the (current) snapshot."""
        self.long_chapter_minutes = minutes
        if self.snapshot is not None:
            self._set_snapshot(with_long_chapters(self.snapshot, minutes))

    def _states(self, delta: StateDelta) -> None:
        if self.snapshot is not None:
            self.snapshot = apply_states(self.snapshot, delta.changes)

    # ------------------------------------------------------------ changes

    def set_language(self, chapter: int, paragraph: int, language: str | None) -> None:
        project, snap = self._need(), self._snap()

        def work() -> ChapterNode:
            project.set_language_override(chapter, paragraph, language)
            return build_chapter(project, snap, chapter)

        self.tasks.run(self._undoable("change the language", work), on_done=self._chapter_done,
                       action="change the language")

    def edit_sentence(self, sentence_id: int, text: str, rerender: bool = True) -> None:
        """Store the new text; only this sentence's key changes, so only it is re-rendered."""
        project, snap = self._need(), self._snap()
        chapter = next((s.chapter for c in snap.chapters for s in c.sentences if s.id == sentence_id), None)
        if chapter is None:
            self.error.emit(ErrorInfo(f"there is no sentence {sentence_id}", "Could not edit the sentence"))
            return

        def work() -> ChapterNode:
            project.edit_sentence(sentence_id, text)
            return build_chapter(project, snap, chapter)

        def done(node: ChapterNode) -> None:
            self._chapter_done(node)
            if rerender:
                where = snap.chapters[chapter].short_label
                self.submit(JobSpec("sentences", f"Edited sentence {sentence_id} ({where})", sentence_ids=(sentence_id,),
                                    sentences_hint=1, urgent=True))

        self.tasks.run(self._undoable("edit the sentence", work), on_done=done, action="edit the sentence")

    def set_spoken(self, sentence_id: int, spoken: str | None) -> None:
        """Say one sentence as ``spoken`` (None: the normaliser's form again); it alone re-renders."""
        project, snap = self._need(), self._snap()
        chapter = next((s.chapter for c in snap.chapters for s in c.sentences if s.id == sentence_id), None)
        if chapter is not None:
            def work() -> ChapterNode:
                project.spoken.set(sentence_id, spoken)
                return build_chapter(project, snap, chapter)

            self.tasks.run(self._undoable("change how the sentence is spoken", work),
                           on_done=self._chapter_done, action="change how the sentence is spoken")

    def _chapter_done(self, node: ChapterNode) -> None:
        if self.snapshot is None:
            return
        self._text_version += 1
        chapters = tuple(node if c.index == node.index else c for c in self.snapshot.chapters)
        self.snapshot = replace(self.snapshot, chapters=chapters)
        self.chapterChanged.emit(node)

    def update_settings(self, settings: ProjectSettings) -> None:
        project, minutes = self._need(), self.long_chapter_minutes

        def work():
            project.update_settings(_with_default_preset(project, settings, project.settings().voice_id))
            new = project.settings()
            return new, build_snapshot(project, long_chapter_minutes=minutes), \
                seconds_per_sentence(project.db, effective_preset(new).name, new.voice_id)

        def done(value) -> None:
            new, snapshot, measured = value
            old = self.settings
            if old is None or (old.voice_id, effective_preset(old).name) != (new.voice_id, effective_preset(new).name):
                self.stats.seed(measured, restart=True)  # the new voice's own speed, not the last one's
            self.settings = new
            self.preview.set_voices(self.voice_for, new.pauses)
            self.settingsChanged.emit(new)
            self._set_snapshot(snapshot)
            self.message.emit("Project settings saved")

        self.tasks.run(self._undoable("change the project settings", work), on_done=done,
                       action="save the project settings")

    def book_details(self, on_done: Callable[[object], None]) -> None:
        """The book's details and where each came from (:func:`studio.delivery.book_details.book_details`),
        read off the GUI thread for the Book Details dialog; saving goes through :meth:`update_settings`."""
        from studio.delivery.book_details import book_details

        project = self._need()
        self.tasks.run(lambda: book_details(project), on_done=on_done, action="read the book's details")

    # ------------------------------------------------------------ rendering

    def submit(self, spec: JobSpec) -> int:
        queue = self._need_queue()
        job_id = queue.submit(spec)
        self.queueChanged.emit(queue.snapshot(self.stats.seconds_per_sentence()))
        return job_id

    def render_book(self) -> int:
        snap = self._snap()
        body = book_chapters(snap)
        return self.submit(JobSpec("book", "Whole book", tuple(c.index for c in body),
                                   sentences_hint=sum(len(c.sentences) for c in body)))

    def plan_book(self, on_done: Callable[[BookPlan], None]) -> None:
        """What "Render Book" would do, for the confirmation (bench file read off the GUI thread)."""
        snap, settings = self._snap(), self.settings
        per_sentence = self.stats.seconds_per_sentence()
        # the preset it renders with: a project without one renders with its engine's default preset
        preset = effective_preset(settings).name if settings is not None else ""
        folder = snap.folder

        def work() -> BookPlan:
            figures, _path, _note = read_bench(folder)
            bench = figures.get(preset)
            return plan_book(snap, per_sentence, bench.x_real_time if bench is not None else None)

        self.tasks.run(work, on_done=on_done, action="plan the book render")

    def render_chapters(self, chapters: Iterable[int]) -> int:
        snap = self._snap()
        idx = tuple(sorted(set(chapters)))
        label = chapters_label(idx, {i: snap.chapters[i].display_name for i in idx})
        hint = sum(len(snap.chapters[i].sentences) for i in idx)
        return self.submit(JobSpec("chapters", label, idx, sentences_hint=hint))

    def render_sentences(self, ids: Sequence[int], label: str = "", regenerate: bool = False) -> int:
        """Render (or take again) some sentences; within one paragraph this goes before chapter jobs."""
        ids = tuple(dict.fromkeys(ids))
        kind = "regenerate" if regenerate else "sentences"
        label = label or (f"{'New take of' if regenerate else 'Selection:'} {counted(len(ids), 'sentence')}")
        urgent = self.snapshot is not None and is_small_selection(self.snapshot, ids)
        return self.submit(JobSpec(kind, label, sentence_ids=ids, sentences_hint=len(ids), urgent=urgent))

    def pause(self) -> None:
        self._queue_op(lambda q: q.pause())

    def resume(self) -> None:
        self._queue_op(lambda q: q.resume())

    def cancel(self, job_id: int) -> None:
        self._queue_op(lambda q: q.cancel(job_id))

    def cancel_all(self) -> None:
        self._queue_op(lambda q: q.cancel_all())

    def move(self, job_id: int, delta: int) -> None:
        self._queue_op(lambda q: q.move(job_id, delta))

    def clear_finished(self) -> None:
        self._queue_op(lambda q: q.clear_finished())

    def _queue_op(self, op: Callable[[JobQueue], object]) -> None:
        if self.queue is not None:
            op(self.queue)
            self.queueChanged.emit(self.queue.snapshot(self.stats.seconds_per_sentence()))

    # ------------------------------------------------------------ search

    def search(self, needle: str) -> None:
        """Find ``needle`` in the book off the GUI thread (index built once per text version)."""
        self.finder.find(self._snap(), self._text_version, needle)

    # ------------------------------------------------------------ waveform

    def request_waveform(self, nodes: Sequence[SentenceNode], label: str = "") -> int:
        """Peaks of these sentences from the cache, off the GUI thread; the newest request wins."""
        project, snap, settings = self._need(), self._snap(), self.settings
        titles = {n.chapter: snap.chapters[n.chapter].title for n in nodes}
        return self.waveforms.request(project, nodes, settings.pauses if settings is not None else Pauses(), label,
                                      titles, snap.timing)

    # ------------------------------------------------------------ preview

    def play(self, nodes: Sequence[SentenceNode], label: str = "") -> int:
        return self.preview.play(nodes, label)

    # ------------------------------------------------------------ helpers

    def _need(self) -> Project:
        if self.project is None:
            raise StudioError("no project is open; open a project or import a manuscript first")
        return self.project

    def _need_queue(self) -> JobQueue:
        if self.queue is None:
            raise StudioError("no project is open; open a project or import a manuscript first")
        return self.queue

    def _snap(self) -> BookSnapshot:
        if self.snapshot is None:
            raise StudioError("no project is open; open a project or import a manuscript first")
        return self.snapshot


def _with_default_preset(project: Project, settings: ProjectSettings, old_voice: str = "") -> ProjectSettings:
    """``settings`` naming this machine's default preset for the voice when they name
    none it runs (:func:`~studio.stack.preset_choice.with_default_preset`, as the command line's
    render does): a new project, or a voice chosen with no preset picked. On the session's task
    thread: reading the cached measurement (and a preset's availability) never waits the window."""
    try:
        named = with_default_preset(project, settings, new_voice=bool(old_voice) and old_voice != settings.voice_id)
    except VoiceError:  # the voice is not installed here: the project keeps what it names
        return settings
    if named.preset != settings.preset:
        log.info("project preset: %s (the default for %s on this computer)", named.preset, named.voice_id)
    return named
