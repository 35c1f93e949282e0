"""The main window: book tree in the middle, details, queue, readouts and log in docks.

Why the window holds no logic of its own: it wires widgets to a
:class:`~studio.desktop.session.ProjectSession` (requests out, frozen values in),
persists its layout and recent projects in QSettings, and shows every error in
the window (status bar, log pane, a non-blocking message box) as well as the log
file. Nothing here blocks the GUI thread.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSettings, Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDockWidget, QFileDialog, QFrame, QLabel, QMainWindow, QMessageBox, QScrollArea, QStackedWidget, QWidget,
)

from studio.desktop.facts import gather_facts_in_subprocess
from studio.desktop.measure import PresetMeasurer
from studio.desktop.messages import ErrorInfo, PlaybackPosition
from studio.desktop.planning import BookPlan
from studio.desktop.preset_words import emphasis_note, preset_label
from studio.desktop.progress import book_progress
from studio.desktop.session import ProjectSession
from studio.desktop.voice_library import VoiceLibrary
from studio.desktop.sinks import output_device_problem
from studio.desktop.snapshot import BookSnapshot, ChapterNode, ParagraphNode, SentenceNode
from studio.ui.book_view import BookPanel
from studio.ui.common import show_message_box
from studio.ui.confirm import book_render_box
from studio.ui.elided import ElidedLabel
from studio.ui.empty_state import SAMPLE_BOOK, EmptyState
from studio.ui.direction_dialog import DirectionDialog
from studio.ui.export_dialog import ExportDialog
from studio.ui.export_flow import open_export_dialog
from studio.ui.import_flow import ImportFlow
from studio.ui.inspector import Inspector
from studio.ui.loading import LoadingNotice
from studio.ui.log_pane import LogPane
from studio.ui.progress_panel import BookProgressPanel
from studio.ui.queue_panel import QueuePanel
from studio.ui.quit_question import QuitGuard
from studio.ui.readouts import ReadoutPanel
from studio.ui.proof_dock import install_proof_dock
from studio.ui.cast_dock import install_cast_dock
from studio.ui.takes_panel import TakesPanel
from studio.ui.triton_panel import test_servers
from studio.ui.voices_dialog import VoicesDialog
from studio.ui.waveform_edit import WaveformPanel
from studio.ui.waveform_view import WaveformController, WaveformView
from studio.ui.window_actions import build_actions
from studio.ui.window_layout import (
    BOTTOM_ROW_HEIGHT, BOTTOM_TABS, PREFERRED_SIZE, RIGHT_COLUMN_WIDTH, RIGHT_TABS, first_geometry, small_screen,
)

log = logging.getLogger(__name__)

MAX_RECENT = 8
PRESET_TIP = "The voice and speed/quality preset this project renders with (Voices & Presets to change)"


class MainWindow(QMainWindow):
    def __init__(self, session: ProjectSession, settings: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.qsettings = settings or QSettings()
        self.errors: list[ErrorInfo] = []
        self.audio_problem: str | None = None
        self.export_dialog: ExportDialog | None = None
        self.voices_dialog: VoicesDialog | None = None
        self.render_book_box: QMessageBox | None = None
        self.quit_guard = QuitGuard(self, session)
        self.importer = ImportFlow(self, session, self.qsettings)
        self.setWindowTitle("Audiobook Studio")
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)

        self.book = BookPanel()
        self.empty = EmptyState()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(self.book)
        self.setCentralWidget(self.pages)
        self.inspector = Inspector()
        self.queue = QueuePanel()
        self.takes = TakesPanel()
        self.wave = WaveformView()
        self.wave_ctl = WaveformController(session, self.book, self.wave, self)
        self.wave_panel = WaveformPanel(self.wave, self.wave_ctl, session)
        self.loading = LoadingNotice(self)
        self.measurer = PresetMeasurer(self, session=session)
        self.readouts = ReadoutPanel()
        self.log_pane = LogPane()
        self.progress = BookProgressPanel(lambda: self.book.model.snapshot and book_progress(
            self.book.model.snapshot, self.book.model.counts, session.stats.seconds_per_sentence()))
        self.docks = {
            "details": self._dock("Details", self.inspector, Qt.DockWidgetArea.RightDockWidgetArea),
            "takes": self._dock("Takes", self.takes, Qt.DockWidgetArea.RightDockWidgetArea),
            "readouts": self._dock("Live readouts", self.readouts, Qt.DockWidgetArea.RightDockWidgetArea),
            "waveform": self._dock("Waveform", self.wave_panel, Qt.DockWidgetArea.TopDockWidgetArea),
            "queue": self._dock("Render queue", self.queue, Qt.DockWidgetArea.BottomDockWidgetArea),
            "progress": self._dock("Book progress", self.progress, Qt.DockWidgetArea.RightDockWidgetArea),
            "log": self._dock("Log", self.log_pane, Qt.DockWidgetArea.BottomDockWidgetArea),
        }
        # the right column runs the full height: the queue under the tree is then held back only
        # by the tree, not by the readouts' minimum height (it used to show two rows)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.tabifyDockWidget(self.docks["queue"], self.docks["log"])
        self.tabifyDockWidget(self.docks["readouts"], self.docks["takes"])
        self.tabifyDockWidget(self.docks["readouts"], self.docks["progress"])
        self.docks["queue"].raise_()
        self.docks["readouts"].raise_()
        self.resizeDocks([self.docks["details"], self.docks["readouts"]], [300, 300], Qt.Orientation.Vertical)
        self.resizeDocks([self.docks["details"]], [380], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["queue"]], [260], Qt.Orientation.Vertical)
        self.proof = install_proof_dock(self)  # proof-listening: flagged sentences, listened in the background
        self.setMinimumSize(640, 480)  # and no more: every panel scrolls or elides below its comfortable size
        self.cast = install_cast_dock(self)  # the characters and their voices; "Spoken by..." in the tree

        self.play_label = QLabel("")
        self.audio_label = QLabel("")
        self.audio_label.setStyleSheet("color: #c62828;")
        self.preset_label = ElidedLabel()
        self.statusBar().addPermanentWidget(self.preset_label)
        self.statusBar().addPermanentWidget(self.play_label)
        self.statusBar().addPermanentWidget(self.audio_label)
        self.actions_ = build_actions(self)
        QShortcut(QKeySequence(Qt.Key.Key_Space), self, self.toggle_playback, context=Qt.ShortcutContext.WindowShortcut)
        self._wire()
        self._restore()
        self._set_project_enabled(False)
        self.empty.set_recent(self.recent_projects())
        self.session.tasks.run(output_device_problem, on_done=self._audio_checked, action="check the audio output")

    # ------------------------------------------------------------ setup

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
        # in a scroll area: a panel taller or wider than its dock scrolls instead of setting the
        # window's minimum size (the window fits a 1280 x 720 laptop screen with every dock open)
        room = QScrollArea()
        room.setObjectName(f"scroll-{title.lower().replace(' ', '-')}")
        room.setWidgetResizable(True)
        room.setFrameShape(QFrame.Shape.NoFrame)
        room.setWidget(widget)
        dock.setWidget(room)
        self.addDockWidget(area, dock)
        return dock

    def _wire(self) -> None:
        s, b = self.session, self.book
        s.opened.connect(self._opened)
        s.snapshotChanged.connect(self._snapshot_changed)
        s.closed.connect(self._closed)
        s.chapterChanged.connect(self._chapter_changed)
        s.statesChanged.connect(self._states_changed)
        s.queueChanged.connect(self.queue.set_snapshot)
        for changed in (s.opened, s.closed, s.statesChanged, s.chapterChanged, s.snapshotChanged, s.jobFinished):
            changed.connect(lambda *_: self.progress.schedule())
        s.readout.connect(self.readouts.show_readout)
        s.engineStatus.connect(self.loading.on_status)
        s.engineStatus.connect(lambda e: (self.readouts.set_engine_status(e.text), self.statusBar().showMessage(e.text, 5000)))
        s.message.connect(lambda m: self.statusBar().showMessage(m, 6000))
        s.error.connect(self.show_error)
        s.jobFinished.connect(lambda j: self.statusBar().showMessage(f"{j.spec.label}: {j.status} \u2014 {j.message}", 8000))
        s.preview.positionChanged.connect(self._position)
        s.preview.problem.connect(self._audio_problem)
        b.playRequested.connect(lambda nodes, label: s.play(nodes, label))
        b.renderChapters.connect(lambda chapters: s.render_chapters(chapters))
        b.renderSentences.connect(lambda ids: s.render_sentences(ids))
        b.regenerate.connect(lambda ids: s.render_sentences(ids, regenerate=True))
        b.languageChosen.connect(s.set_language)
        b.chapterIncluded.connect(s.set_chapter_included)
        b.chapterRenamed.connect(s.rename_chapter)
        b.chapterMerged.connect(s.merge_chapter)
        b.chapterSplit.connect(s.split_chapter)
        b.model.editRequested.connect(s.edit_sentence)
        b.longChapterMinutesChanged.connect(s.set_long_chapter_minutes)
        b.currentChanged.connect(self._show_details)
        i = self.inspector
        i.saveText.connect(s.edit_sentence)
        i.regenerate.connect(lambda ids: s.render_sentences(ids, regenerate=True))
        i.play.connect(b.play_selection)
        i.languageChosen.connect(s.set_language)
        i.spoken.spokenChosen.connect(s.set_spoken)
        b.playFromRequested.connect(self.play_from)
        b.directionRequested.connect(self.open_direction)
        b.searchRequested.connect(lambda text: s.project is not None and s.search(text))
        s.searchReady.connect(b.apply_search)
        t = self.takes
        s.takesChanged.connect(t.set_takes)
        s.settingsChanged.connect(self._show_preset)
        s.closed.connect(lambda: self.preset_label.set_full_text(""))
        t.playTakes.connect(lambda sid, ids: s.play_takes(sid, ids, t.label_for(ids)))
        t.chooseTake.connect(s.choose_take)
        t.newTake.connect(lambda sid: s.render_sentences([sid], regenerate=True))
        s.jobFinished.connect(lambda _job: self._reload_takes())
        self.empty.importRequested.connect(self.ask_import)
        self.empty.sampleRequested.connect(self.open_sample)
        self.empty.openRequested.connect(self.open_path)
        q = self.queue
        q.pauseToggled.connect(lambda on: s.pause() if on else s.resume())
        q.cancelJob.connect(s.cancel)
        q.moveJob.connect(s.move)
        q.clearFinished.connect(s.clear_finished)

    def _restore(self) -> None:
        geo = self.qsettings.value("window/geometry")
        state = self.qsettings.value("window/state")
        screen = self.screen()
        room = screen.availableGeometry() if screen is not None else None
        small = room is not None and small_screen(room.size())
        if isinstance(geo, QByteArray):
            self.restoreGeometry(geo)
        else:  # the first start: inside the screen's free area (it opened 1360 x 860 on a 768-pixel screen)
            self.setGeometry(first_geometry(room) if room is not None else QRect(0, 0, *PREFERRED_SIZE))
            if small:
                self.setWindowState(self.windowState() | Qt.WindowState.WindowMaximized)
        if isinstance(state, QByteArray):
            self.restoreState(state)
        elif small:
            self.tab_docks()
        minutes = float(self.qsettings.value("flags/longChapterMinutes", 60.0))
        self.book.long_minutes.setValue(minutes)
        self.session.set_long_chapter_minutes(minutes)

    def tab_docks(self) -> None:
        """View > Tab the Docks: the right column's docks in one tab group, and the bottom's in
        another (a laptop screen: each dock gets the column's whole height, the waveform the bottom's,
        so that no dock's controls need scrolling at 1366 x 768)."""
        d = self.docks
        for name in RIGHT_TABS:
            if name in d:
                self.tabifyDockWidget(d["details"], d[name])
        for name in BOTTOM_TABS:
            if name in d:
                self.tabifyDockWidget(d["queue"], d[name])
        self.resizeDocks([d["details"]], [RIGHT_COLUMN_WIDTH], Qt.Orientation.Horizontal)
        self.resizeDocks([d["queue"]], [BOTTOM_ROW_HEIGHT], Qt.Orientation.Vertical)
        d["details"].raise_()
        d["queue"].raise_()

    def save_settings(self) -> None:
        self.qsettings.setValue("window/geometry", self.saveGeometry())
        self.qsettings.setValue("window/state", self.saveState())
        self.qsettings.setValue("flags/longChapterMinutes", self.book.long_minutes.value())
        self.qsettings.sync()

    # ------------------------------------------------------------ projects

    def open_path(self, path: str | Path) -> None:
        """A project folder opens as it is; a book opens into the folder of projects (asked once)."""
        if Path(path).is_file():
            self.importer.open_manuscript(path)
        else:
            self.session.open_path(path)

    def ask_open_project(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open project folder", self._last_dir())
        if folder:
            self.open_path(folder)

    def ask_import(self) -> None:
        """File > Import and New Project: manuscript, where to keep the project, import with progress."""
        self.importer.ask()

    ask_new_project = ask_import

    def _last_dir(self) -> str:
        return str(self.qsettings.value("paths/lastDir", str(Path.home())))

    def recent_projects(self) -> list[str]:
        value = self.qsettings.value("recent/projects", [])
        items = [value] if isinstance(value, str) else list(value or [])
        return [str(v) for v in items if v]

    def _remember(self, folder: str) -> None:
        recent = [folder] + [r for r in self.recent_projects() if r != folder]
        self.qsettings.setValue("recent/projects", recent[:MAX_RECENT])
        self.qsettings.setValue("paths/lastDir", str(Path(folder).parent))
        self.actions_.refresh_recent()
        self.empty.set_recent(self.recent_projects())

    def open_sample(self) -> None:
        """Copy the sample book to the user's folder (never write beside the installed one) and open it."""
        folder = Path(str(self.qsettings.value("paths/sampleDir", "") or Path.home() / "Audiobook Studio"))
        try:
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / SAMPLE_BOOK.name
            if not target.exists():
                shutil.copyfile(SAMPLE_BOOK, target)
        except OSError as err:
            self.show_error(ErrorInfo(f"cannot copy the sample book to {folder}: {err}", "Sample book"))
            return
        self.open_path(target)

    def _opened(self, snap: BookSnapshot) -> None:
        self.pages.setCurrentWidget(self.book)
        self.book.set_snapshot(snap)
        self.actions_.named["read_front"].setChecked(snap.read_front)
        self.inspector.show_node(None)
        self.setWindowTitle(f"{snap.title} \u2014 Audiobook Studio")
        self._remember(snap.folder)
        self._set_project_enabled(True)

    def _snapshot_changed(self, snap: BookSnapshot) -> None:
        current = self.book.tree.currentIndex()
        sid = getattr(self.book.node_at(current), "id", None) if current.isValid() else None
        self.book.update_snapshot(snap)
        if sid is not None:
            self.book.select_sentence(sid)
        elif current.isValid():  # a chapter's or paragraph's figures may have changed (new pauses)
            self._show_details(self.book.node_at(self.book.tree.currentIndex()))

    def _closed(self) -> None:
        self.empty.set_recent(self.recent_projects())
        self.pages.setCurrentWidget(self.empty)
        self.book.set_snapshot(None)
        self.inspector.show_node(None)
        self.takes.show_sentence(None)  # nothing of the previous book stays in the docks
        self.wave_ctl.show(None)
        self.setWindowTitle("Audiobook Studio")
        self._set_project_enabled(False)

    def _show_preset(self, settings) -> None:  # noqa: ANN001 - ProjectSettings
        """The preset and voice in the status bar, whole up to 460 px: a status message beside it left
        it "Preset: B\u2026"."""
        self.preset_label.set_full_text(preset_label(settings.preset, settings.voice_id, settings.backend), PRESET_TIP)
        self.preset_label.setMinimumWidth(min(self.preset_label.sizeHint().width(), 460))

    def _set_project_enabled(self, on: bool) -> None:
        for act in self.actions_.project_actions:
            act.setEnabled(on)

    def _chapter_changed(self, node) -> None:
        self.book.model.replace_chapter(node)
        self.book.refresh_banner()  # a language override or an inclusion shows in the banner at once
        self.wave_ctl.stale({x.id for x in node.sentences})
        self._show_details(self.book.node_at(self.book.tree.currentIndex()))

    def _states_changed(self, delta) -> None:
        self.book.model.apply_delta(delta)
        self.wave_ctl.stale({c.sentence_id for c in delta.changes if c.state != "rendering"})
        node = self.inspector._node
        if isinstance(node, SentenceNode) and any(c.sentence_id == node.id for c in delta.changes):
            self._show_details(self.book.model.sentence(node.id))
        elif isinstance(node, ChapterNode) and self.book.model.snapshot is not None:  # its length follows the render
            self._show_details(self.book.model.snapshot.chapters[node.index])

    def _show_details(self, node) -> None:
        para = None
        if isinstance(node, SentenceNode):
            para = self.book._paragraph_of(node)
        if self.inspector.editor.hasFocus() and isinstance(node, SentenceNode) and node is not None \
                and getattr(self.inspector._node, "id", None) == node.id and self.inspector.save_btn.isEnabled():
            return  # do not clobber text being edited
        self.inspector.show_node(node, para if isinstance(para, ParagraphNode) else None)
        if isinstance(node, SentenceNode):
            self.takes.show_sentence(node.id, node.text)
            self._reload_takes()
        else:
            self.takes.show_sentence(None)

        self.wave_ctl.show(node)

    def play_from(self, sentence_id: int) -> None:
        """Play from a sentence to the end of its chapter (a click in the waveform, the tree's menu)."""
        self.wave_ctl.play_from(sentence_id)

    def _reload_takes(self) -> None:
        if self.takes.sentence_id is not None and self.session.project is not None:
            self.session.load_takes(self.takes.sentence_id)

    # ------------------------------------------------------------ rendering / playback

    def render_current_chapter(self) -> None:
        chapters = self.book.selected_chapters()
        if chapters:
            self.session.render_chapters(chapters)
        else:
            self.statusBar().showMessage("Select a chapter (or anything in it) to render it", 5000)

    def confirm_render_book(self) -> None:
        """Ask once, with the count, the time and the chapters left out, then queue the book."""
        self.session.plan_book(self._ask_render_book)

    def _ask_render_book(self, plan: BookPlan) -> None:
        if self.session.snapshot is None:
            return
        if plan.to_render == 0:
            self.statusBar().showMessage("Every included chapter is already rendered", 6000)
            return
        box = book_render_box(self, plan)
        box.buttonClicked.connect(
            lambda button: box.buttonRole(button) == box.ButtonRole.AcceptRole and self.session.render_book())
        self.render_book_box = box
        box.open()

    def render_selection(self) -> None:
        ids = [s.id for s in self.book.selected_sentences()]
        if ids:
            self.session.render_sentences(ids)

    def find_text(self) -> None:
        """Edit > Find: the book's search field, its text selected (it searches text and spoken forms)."""
        self.book.search.setFocus()
        self.book.search.selectAll()

    def toggle_playback(self) -> None:
        state = self.session.preview.position().state
        if state in ("playing", "paused", "buffering"):
            self.session.preview.toggle()
        else:
            self.book.play_selection()

    def _position(self, pos: PlaybackPosition) -> None:
        self.wave_ctl.cursor(pos)
        playing = pos.state in ("playing", "buffering", "paused")
        heard = pos.sentence_id if playing else None
        if heard != self.book.model.playing:  # repaint/scroll only when the sentence changes
            self.book.show_playing(heard)
        icon = {"playing": "\u25b6", "paused": "\u23f8", "buffering": "\u23f3"}.get(pos.state, "")
        m, s = divmod(int(pos.played_s), 60)
        self.play_label.setText(f"{icon} {pos.label[:40]}  {m}:{s:02d}" if playing else "")
        if pos.message and pos.state != "error":
            self.statusBar().showMessage(f"Preview: {pos.message}", 6000)

    def _audio_checked(self, problem: str | None) -> None:
        if problem:
            self._audio_problem(problem, announce=False)

    def _audio_problem(self, message: str, announce: bool = True) -> None:
        self.audio_problem = message
        self.audio_label.setText(message.split(".")[0] if message.startswith("No sound") else "No sound output")
        self.audio_label.setToolTip(message)
        if announce:
            self.statusBar().showMessage(message, 10000)
            log.warning("%s", message)

    # ------------------------------------------------------------ dialogs

    def open_direction(self, nodes: list) -> None:
        if nodes:
            self.direction_dialog = DirectionDialog(nodes, self, emphasis_note(self.session.settings))
            self.direction_dialog.directed.connect(self.session.set_direction)
            self.direction_dialog.open()

    def open_voices(self) -> None:
        s = self.session
        if s.settings is None or s.snapshot is None:
            return
        langs = sorted({p.effective_language for c in s.snapshot.chapters for p in c.paragraphs})
        dlg = VoicesDialog(s.settings, langs, self, measurer=self.measurer, project_folder=str(s.snapshot.folder),
                           library=VoiceLibrary())
        dlg.applied.connect(s.update_settings)
        dlg.sampleRequested.connect(lambda vid, lang, text: s.preview.play_text(text, lang, vid, f"sample: {vid}"))
        folder = s.snapshot.folder
        s.tasks.run(lambda: gather_facts_in_subprocess(folder), on_done=lambda f: dlg.isVisible() and dlg.set_facts(f),
                    action="check voices and presets")
        dlg.triton.testRequested.connect(lambda fields: test_servers(s, dlg.triton, fields, dlg.isVisible))
        self.voices_dialog = dlg
        dlg.open()

    def open_export(self) -> None:
        self.export_dialog = open_export_dialog(self) or self.export_dialog

    # ------------------------------------------------------------ errors and events

    def show_error(self, err: ErrorInfo) -> None:
        """Status bar + log pane/file + a message box that does not block the event loop."""
        self.errors.append(err)
        log.error("%s: %s", err.title, err.message)
        self.statusBar().showMessage(f"\u26a0 {err.message}", 15000)
        show_message_box(self, err.title, err.message, err.detail)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_path(paths[0])

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.quit_guard.intercept(event):  # render work outstanding: finish later or discard
            return
        self.save_settings()
        self.log_pane.detach()
        self.session.shutdown()
        super().closeEvent(event)
