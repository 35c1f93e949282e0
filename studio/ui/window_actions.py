"""Menus, toolbar and shortcuts of the main window (kept apart to keep the window readable)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QDockWidget, QMenu, QMenuBar, QStatusBar, QStyle, QToolBar

from studio.desktop.logsetup import log_file_path
from studio.ui.audit_panel import open_audit_dialog
from studio.ui.lexicon_panel import open_lexicon_dialog
from studio.ui.book_details_dialog import open_book_details
from studio.ui.content_dialog import open_content_dialog
from studio.ui.pacing_dialog import open_pacing_dialog
from studio.ui.guide_window import open_guide
from studio.ui.help_menu import name_history, show_shortcuts

from studio.desktop.session import ProjectSession


class ActionHost(Protocol):
    """What the actions call on the main window (:class:`~studio.ui.main_window.MainWindow`,
    which builds them): typed by what is used, so the window's module is not imported back."""

    session: ProjectSession
    docks: dict[str, QDockWidget]
    queue: Any  # QueuePanel: its pause button
    quit_guard: Any  # QuitGuard: quit()

    def style(self) -> QStyle: ...
    def addToolBar(self, bar: QToolBar) -> None: ...
    def menuBar(self) -> QMenuBar: ...
    def statusBar(self) -> QStatusBar: ...
    def recent_projects(self) -> list[str]: ...
    def open_path(self, path: str | Path) -> None: ...
    def ask_import(self) -> None: ...
    def ask_new_project(self) -> None: ...
    def ask_open_project(self) -> None: ...
    def open_export(self) -> None: ...
    def open_voices(self) -> None: ...
    def confirm_render_book(self) -> None: ...
    def render_current_chapter(self) -> None: ...
    def render_selection(self) -> None: ...
    def toggle_playback(self) -> None: ...
    def find_text(self) -> None: ...


@dataclass
class WindowActions:
    window: ActionHost
    recent_menu: QMenu
    project_actions: list[QAction] = field(default_factory=list)
    named: dict[str, QAction] = field(default_factory=dict)

    def refresh_recent(self) -> None:
        self.recent_menu.clear()
        recent = self.window.recent_projects()
        for folder in recent:
            act = self.recent_menu.addAction(Path(folder).name)
            act.setToolTip(folder)
            act.setStatusTip(folder)
            act.triggered.connect(lambda _=False, f=folder: self.window.open_path(f))
        if not recent:
            self.recent_menu.addAction("(none yet)").setEnabled(False)


def build_actions(w: ActionHost) -> WindowActions:
    style = w.style()
    s = w.session
    bar = QToolBar("Main")
    bar.setObjectName("toolbar-main")
    bar.setMovable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    w.addToolBar(bar)
    menus = w.menuBar()
    file_menu = menus.addMenu("&File")
    edit_menu = menus.addMenu("&Edit")
    render_menu = menus.addMenu("&Render")
    play_menu = menus.addMenu("P&layback")  # Alt+P is Project's: it used to open Playback
    project_menu = menus.addMenu("&Project")
    view_menu = menus.addMenu("&View")
    help_menu = menus.addMenu("&Help")
    acts = WindowActions(w, QMenu("Open &Recent", w))

    def act(name: str, text: str, slot: Callable[[], object], *, menu: QMenu, shortcut: str | QKeySequence | None = None,
            icon: QStyle.StandardPixmap | None = None, tip: str = "", toolbar: bool = False, project: bool = False, label: str = "") -> QAction:
        a = QAction(text, w)
        if shortcut:
            a.setShortcut(QKeySequence(shortcut))
        if icon is not None:
            a.setIcon(style.standardIcon(icon))
        if tip:
            a.setToolTip(tip)
            a.setStatusTip(tip)
        if label:
            a.setIconText(label)
        a.triggered.connect(lambda _=False: slot())
        menu.addAction(a)
        if toolbar:
            bar.addAction(a)
        if project:
            acts.project_actions.append(a)
        acts.named[name] = a
        return a

    SP = QStyle.StandardPixmap
    act("import", "&Import Manuscript\u2026", w.ask_import, menu=file_menu, shortcut=QKeySequence.StandardKey.Open,
        icon=SP.SP_FileIcon, toolbar=True, label="Import",
        tip="Import a manuscript (.txt .md .html .epub .docx) into a project folder of your choice (a dropped file gets its project beside it)")
    act("new", "&New Project from Manuscript\u2026", w.ask_new_project, menu=file_menu, shortcut="Ctrl+N",
        tip="Import a manuscript into a project folder of your choice")
    act("open", "Open &Project Folder\u2026", w.ask_open_project, menu=file_menu, shortcut="Ctrl+Shift+O",
        icon=SP.SP_DirOpenIcon, toolbar=True, label="Open", tip="Open an existing project folder")
    file_menu.addMenu(acts.recent_menu)
    file_menu.addSeparator()
    act("close", "&Close Project", s.close_project, menu=file_menu, project=True)
    act("quit", "&Quit", w.quit_guard.quit, menu=file_menu, shortcut=QKeySequence.StandardKey.Quit)
    bar.addSeparator()

    undo = act("undo", "&Undo", s.undo, menu=edit_menu, shortcut=QKeySequence.StandardKey.Undo, project=True,
               tip="Take back the last edit (text, pronunciation, cast, chapters, direction, settings); "
                   "the history is kept with the project")
    redo = act("redo", "&Redo", s.redo, menu=edit_menu, shortcut=QKeySequence.StandardKey.Redo, project=True,
               tip="Make the last undone edit again")
    redo.setShortcuts([QKeySequence(QKeySequence.StandardKey.Redo), QKeySequence("Ctrl+Y")])
    s.historyChanged.connect(lambda labels: name_history(undo, redo, labels))
    edit_menu.aboutToShow.connect(lambda: s.project is not None and s.read_history())
    edit_menu.addSeparator()
    act("find", "&Find\u2026", w.find_text, menu=edit_menu, shortcut=QKeySequence.StandardKey.Find, project=True,
        tip="Find words in the book's text and in what the voice says (spoken forms)")

    act("render_chapter", "Render &Chapter", w.render_current_chapter, menu=render_menu, shortcut="Ctrl+R",
        icon=SP.SP_MediaSeekForward, toolbar=True, label="Render Chapter", project=True, tip="Render the selected chapters (or the chapter of the selected sentence)")
    act("render_selection", "Render &Selection", w.render_selection, menu=render_menu, shortcut="Ctrl+Shift+R",
        project=True, tip="Render only the selected sentences")
    act("render_book", "Render Whole &Book\u2026", w.confirm_render_book, menu=render_menu, shortcut="Ctrl+B",
        icon=SP.SP_MediaSkipForward, toolbar=True, label="Render Book", project=True,
        tip="Render every chapter except front matter (asks first, with the count, time and chapters left out)")
    render_menu.addSeparator()
    act("pause", "&Pause / Resume Queue", lambda: w.queue.pause_btn.toggle(), menu=render_menu, shortcut="Ctrl+P",
        project=True)
    act("cancel_all", "Cancel &All Jobs", s.cancel_all, menu=render_menu, project=True)
    bar.addSeparator()

    act("play", "&Play / Pause", w.toggle_playback, menu=play_menu, icon=SP.SP_MediaPlay, toolbar=True, label="Play/Pause", project=True,
        tip="Play the selection (space plays/pauses); unrendered text is synthesized on the fly")
    act("stop", "&Stop", s.preview.stop, menu=play_menu, shortcut="Esc", icon=SP.SP_MediaStop, toolbar=True, label="Stop",
        project=True)
    bar.addSeparator()

    act("voices", "&Voices && Presets\u2026", w.open_voices, menu=project_menu, shortcut="Ctrl+Shift+V",
        icon=SP.SP_MediaVolume, toolbar=True, label="Voices", project=True,
        tip="Default voice, a voice per language, and the speed/quality preset")
    act("pacing", "Speed && &Pauses\u2026", lambda: open_pacing_dialog(w), menu=project_menu, project=True,
        tip="How fast the voice speaks, and the pauses between sentences, paragraphs and chapters")
    act("content", "Notes, &Images, Tables && Code\u2026", lambda: open_content_dialog(w), menu=project_menu,
        project=True, tip="Footnotes at the end of the chapter, in place or left out; captions and alt text; "
                          "tables row by row or summarised; code read or left out")
    act("book_details", "Book &Details\u2026", lambda: open_book_details(w), menu=project_menu, project=True,
        tip="Title, author, narrator, the book's rights and the recording's copyright, and where each came "
            "from: what the credits say and the files are tagged with")
    act("export", "&Export Chapters\u2026", w.open_export, menu=project_menu, shortcut="Ctrl+E",
        icon=SP.SP_DialogSaveButton, toolbar=True, label="Export", project=True, tip="Write chapters as WAV or MP3")
    act("lexicon", "Pro&nunciations\u2026", lambda: open_lexicon_dialog(w), menu=project_menu, shortcut="Ctrl+L",
        project=True, tip="Respellings and phonemes for names and rare words; the words to check")
    act("audit", "Book &Audit…", lambda: open_audit_dialog(w), menu=project_menu, project=True,
        tip="Everything the voice would say other than as a narrator reads it: symbols it would name, words it "
            "would spell, other languages, guessed words, uncertain heteronyms")
    front = act("read_front", "Read &Front Matter (Epigraphs, Extracts, Etymology\u2026)",
                lambda: s.set_read_front_matter(front.isChecked()), menu=project_menu, project=True,
                tip="Include the book's epigraphs, extracts, etymology, dedication and preface; contents, copyright "
                    "and title pages stay out. Chapters you included or excluded by hand keep your choice.")
    front.setCheckable(True)
    act("refresh", "Re&load Book", s.refresh, menu=project_menu, shortcut="F5", project=True)

    for dock in w.docks.values():
        view_menu.addAction(dock.toggleViewAction())
    view_menu.addSeparator()
    act("tab_docks", "&Tab the Docks", w.tab_docks, menu=view_menu,
        tip="Put the docks of each side in one group of tabs (a small screen); drag a tab out to undock it")
    act("guide", "&User Guide", lambda: open_guide(w), menu=help_menu, shortcut=QKeySequence.StandardKey.HelpContents,
        tip="The user guide, one page per topic, in a window of its own (no web browser needed)")
    act("shortcuts", "&Keyboard Shortcuts", lambda: show_shortcuts(w, acts), menu=help_menu,
        tip="Every menu command that has a key, and the keys of the book tree")
    help_menu.addSeparator()
    act("log_file", "Open &Log File", lambda: open_log_file(w), menu=help_menu,
        tip=f"The log file: {log_file_path()}")
    act("about", "&About", lambda: w.statusBar().showMessage(
        "Audiobook Studio \u2014 render manuscripts with neural voices on your own machine", 8000), menu=help_menu)
    acts.refresh_recent()
    return acts


def open_log_file(w: ActionHost) -> None:
    """Help > Open Log File: in the desktop's text viewer, or its place said where there is none."""
    path = log_file_path()
    if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        w.statusBar().showMessage(f"The log file is {path} (no program here opens it)", 15000)
