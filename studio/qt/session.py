"""One open project and everything that works on it, behind one QObject.

Why a session object between the window and the workers: widgets should only
say what the user wants ("render chapter 3", "this paragraph is French") and
show what comes back. The session turns wishes into background tasks (project
I/O on a one-thread :class:`~studio.qt.tasks.TaskRunner`, so changes keep their
order), render jobs (the :class:`~studio.qt.render_worker.RenderWorker`'s
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

from studio.audio.assemble import Pauses
from studio.core.errors import StudioError
from studio.core.language import language_family
from studio.jobs.engines import EngineBuilder, Isolation, build_engine
from studio.jobs.session import Opened, open_project
from studio.project.numbering import chapters_label
from studio.project.queue_state import StoredQueue, load_queue
from studio.project.settings import ProjectSettings
from studio.project.store import Project
from studio.qt.chapter_edits import ChapterEdits
from studio.qt.facts import read_bench
from studio.qt.jobqueue import JobQueue
from studio.qt.messages import ErrorInfo, ExportProgress, JobSpec, PackageChoices, StateDelta
from studio.qt.queue_keeper import QueueKeeper, restore_queue
from studio.qt.monitor import MonitorThread, RenderStats, StallMeter
from studio.qt.planning import BookPlan, book_chapters, is_small_selection, plan_book
from studio.qt.preview import PreviewController, SinkFactory
from studio.qt.render_worker import RenderWorker
from studio.qt.search import SearchIndex, SearchResult
from studio.qt.sinks import SoundDeviceSink
from studio.qt.snapshot import (
    BookSnapshot,
    ChapterNode,
    SentenceNode,
    apply_states,
    build_chapter,
    build_snapshot,
    with_long_chapters,
)
from studio.qt.takes import TakeList, take_list
from studio.qt.tasks import OnError, TaskRunner
from studio.qt.waveform import PeakCache, WaveformData

log = logging.getLogger(__name__)


class ProjectSession(QObject, ChapterEdits):
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
        self.export_tasks = TaskRunner(self, threads=1, on_error=self.error.emit)
        self.wave_tasks = TaskRunner(self, threads=1, on_error=self.error.emit)  # never behind an edit
        self.peaks = PeakCache()
        self.search_tasks = TaskRunner(self, threads=1, on_error=self.error.emit)
        self._index: tuple[int, SearchIndex] | None = None  # (text version, index)
        self._text_version = 0
        self._search_wanted = 0
        self.indexes_built = 0
        self._wave_wanted = 0
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
                return (project, action, build_snapshot(project, long_chapter_minutes=minutes), project.settings(),
                        load_queue(project))
            except BaseException:
                project.close()
                raise

        def done(value) -> None:
            project, action, snapshot, settings, stored = value
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
            self.message.emit(f"Render queue restored: {len(stored.jobs)} job(s){', paused' if stored.paused else ''}")
        self.keeper = QueueKeeper(project, self.queue, self.tasks)
        self.worker = RenderWorker(project, self.queue, self.stats, self.preview.player,
                                   build=self.build, isolation=self.isolation)
        w = self.worker
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
        self.search_tasks.wait()
        self.export_tasks.wait()
        self.wave_tasks.wait()

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
            self.snapshot = snapshot
            self._text_version += 1
            self.snapshotChanged.emit(snapshot)

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

        self.tasks.run(work, on_done=self._chapter_done, action="change the language")

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

        self.tasks.run(work, on_done=done, action="edit the sentence")

    def set_spoken(self, sentence_id: int, spoken: str | None) -> None:
        """Say one sentence as ``spoken`` (None: the normaliser's form again); it alone re-renders."""
        project, snap = self._need(), self._snap()
        chapter = next((s.chapter for c in snap.chapters for s in c.sentences if s.id == sentence_id), None)
        if chapter is not None:
            self.tasks.run(lambda: (project.spoken.set(sentence_id, spoken), build_chapter(project, snap, chapter))[1],
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
            project.update_settings(settings)
            return project.settings(), build_snapshot(project, long_chapter_minutes=minutes)

        def done(value) -> None:
            new, snapshot = value
            self.settings = new
            self.preview.set_voices(self.voice_for, new.pauses)
            self.settingsChanged.emit(new)
            self._set_snapshot(snapshot)
            self.message.emit("Project settings saved")

        self.tasks.run(work, on_done=done, action="save the project settings")

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
        preset = settings.preset if settings is not None else ""
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
        label = label or (f"{'New take of' if regenerate else 'Selection:'} {len(ids)} sentence(s)")
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
        snap, version = self._snap(), self._text_version
        self._search_wanted += 1
        rid = self._search_wanted

        def work() -> SearchResult:
            if self._index is None or self._index[0] != version:
                self._index = (version, SearchIndex(snap))
                self.indexes_built += 1
            return self._index[1].find(needle)

        def done(result: SearchResult) -> None:
            if rid == self._search_wanted:
                self.searchReady.emit(result)

        self.search_tasks.run(work, on_done=done, action="search the book")

    # ------------------------------------------------------------ waveform

    def request_waveform(self, nodes: Sequence[SentenceNode], label: str = "") -> int:
        """Peaks of these sentences from the cache, off the GUI thread; the newest request wins."""
        project, settings = self._need(), self.settings
        pauses = settings.pauses if settings is not None else Pauses()
        self._wave_wanted += 1
        rid, nodes = self._wave_wanted, tuple(nodes)

        def done(data: WaveformData) -> None:
            if rid == self._wave_wanted and self.project is project:
                self.waveformReady.emit(data)

        titles = {n.chapter: self._snap().chapters[n.chapter].title for n in nodes}
        timing = self._snap().timing
        self.wave_tasks.run(lambda: self.peaks.get(project, nodes, pauses, label, titles, timing), on_done=done,
                            action="draw the waveform")
        return rid

    # ------------------------------------------------------------ takes

    def load_takes(self, sentence_id: int) -> None:
        """Read a sentence's takes in the background; they arrive as ``takesChanged``."""
        project = self._need()
        self.tasks.run(lambda: take_list(project, sentence_id), on_done=self._takes_read, action="read the takes")

    def choose_take(self, sentence_id: int, take_id: int) -> None:
        """Use a take from now on (export and playback read it); the choice is stored in the project."""
        project, snap = self._need(), self._snap()
        chapter = next((s.chapter for c in snap.chapters for s in c.sentences if s.id == sentence_id), 0)

        def work() -> tuple[ChapterNode, TakeList]:
            project.takes.choose(sentence_id, take_id)
            return build_chapter(project, snap, chapter), take_list(project, sentence_id)

        def done(value: tuple[ChapterNode, TakeList]) -> None:
            self._chapter_done(value[0])
            self._takes_read(value[1])
            self.message.emit(f"Take {take_id} is used from now on")

        self.tasks.run(work, on_done=done, action="choose the take")

    def play_takes(self, sentence_id: int, take_ids: Sequence[int]) -> int:
        label = " then ".join(f"take {t}" for t in take_ids)
        return self.preview.play_takes([(t, sentence_id) for t in take_ids], label)

    def _takes_read(self, takes: TakeList) -> None:
        if self.project is not None and takes.folder == str(self.project.folder):
            self.takesChanged.emit(takes)

    # ------------------------------------------------------------ preview and export

    def play(self, nodes: Sequence[SentenceNode], label: str = "") -> int:
        return self.preview.play(nodes, label)

    def export(self, out_dir: str | Path, fmt: str, chapters: Sequence[int], *, on_progress=None,
               on_done=None, on_error=None, bitrate: str = "128k") -> None:
        """Write chapter files in the background, one chapter at a time (progress per chapter)."""
        from studio.jobs.export import export_chapter_files

        project, snap = self._need(), self._snap()
        wanted = sorted(set(chapters))

        def work(report) -> ExportProgress:
            files: list[str] = []
            seconds = 0.0
            report(ExportProgress(0, len(wanted), snap.chapters[wanted[0]].title if wanted else ""))
            for n, idx in enumerate(wanted, 1):
                for f in export_chapter_files(project, out_dir, fmt, [idx], bitrate=bitrate):
                    files.append(str(f.path))
                    seconds += f.duration
                nxt = snap.chapters[wanted[n]].title if n < len(wanted) else ""
                report(ExportProgress(n, len(wanted), nxt, tuple(files), seconds))
            return ExportProgress(len(wanted), len(wanted), "", tuple(files), seconds)

        self.export_tasks.run(work, on_progress=on_progress, on_done=on_done, on_error=on_error,
                              action="export the chapters")

    def publish(self, out_dir: str | Path, fmt: str, chapters: Sequence[int], *,
                choices: PackageChoices = PackageChoices(), on_progress=None, on_done=None,
                on_error=None) -> None:  # noqa: ANN001
        """Publish-ready files (mastered, tagged, checked, with credits and sample as
        ``choices`` say; see :mod:`studio.jobs.publish`) in the background; progress per
        chapter, ``on_done`` gets the frozen PublishResult."""
        from studio.jobs.publish import PublishOptions, publish

        project = self._need()
        c = choices
        options = PublishOptions(
            fmt=fmt, chapters=sorted(set(chapters)), cover=Path(c.cover) if c.cover else None,
            cover_fit=c.cover_fit or None, credits=c.credits, opening=c.opening.strip() or None,
            closing=c.closing.strip() or None, sample=c.sample, sample_chapter=c.sample_chapter)

        def work(report=lambda _p: None):  # noqa: ANN001, ANN202 - called without it when nobody listens
            return publish(project, out_dir, options,
                           progress=lambda p: report(ExportProgress(p.done, p.total, p.current)))

        self.export_tasks.run(work, on_progress=on_progress, on_done=on_done, on_error=on_error,
                              action="publish the book")

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
