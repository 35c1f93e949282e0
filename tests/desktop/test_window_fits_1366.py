"""A 1366 x 768 laptop (issue 41, point 1): the first window fits the screen's free area, and
maximized there every dock's controls are in sight without scrolling (the docks in tabs)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QApplication, QScrollArea
from support.gui import copy_sample
from support.window import WAIT, open_and_wait

from studio.ui.main_window import MainWindow
from studio.ui.window_layout import PREFERRED_SIZE, first_geometry, small_screen

#: a 1366 x 768 screen less a 28-pixel panel; maximized, a window manager's title bar takes ~30 more
LAPTOP_ROOM = QRect(0, 28, 1366, 740)
MAXIMIZED = QSize(1366, 710)


def test_the_first_window_fits_the_free_area() -> None:
    place = first_geometry(LAPTOP_ROOM)
    assert LAPTOP_ROOM.contains(place) and place.height() <= LAPTOP_ROOM.height() - 40  # its title bar too
    assert small_screen(LAPTOP_ROOM.size()) and not small_screen(QSize(1920, 1050))
    big = first_geometry(QRect(0, 0, 1920, 1050))
    assert (big.width(), big.height()) == PREFERRED_SIZE  # a large screen keeps the comfortable size


def test_maximized_on_a_laptop_every_dock_shows_its_controls(qtbot, window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    open_and_wait(qtbot, window, copy_sample(tmp_path / "books"))
    window.resize(MAXIMIZED)
    qtbot.waitUntil(lambda: window.size() == MAXIMIZED, timeout=WAIT)
    window.actions_.named["tab_docks"].trigger()  # what a small screen's first start does
    QApplication.processEvents()
    for name, dock in window.docks.items():
        dock.raise_()
        QApplication.processEvents()
        room = dock.findChild(QScrollArea)
        assert dock.isVisible() and room.isVisible(), name
        # nothing to scroll: the panel's controls all in the dock (Details' Spoken, Play, Save & re-render...)
        assert room.verticalScrollBar().maximum() == 0 and room.horizontalScrollBar().maximum() == 0, \
            (name, room.viewport().size(), room.widget().minimumSizeHint())
    assert window.docks["waveform"].height() > 200  # more than its ruler


def test_a_first_start_on_a_small_screen_is_maximized_inside_it(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from PySide6.QtCore import Qt
    from support.gui import shared_factory
    from support.window import window_settings

    from studio.desktop.session import ProjectSession
    from studio.desktop.sinks import NullSink

    session = ProjectSession(build=shared_factory([]), sink_factory=lambda: NullSink(speed=8.0))
    win = MainWindow(session, window_settings(tmp_path))  # no saved geometry: a first start
    qtbot.addWidget(win)
    room = win.screen().availableGeometry()  # the offscreen screen: 800 x 800, a small one
    assert small_screen(room.size())
    assert win.windowState() & Qt.WindowState.WindowMaximized
    assert room.contains(win.geometry())
    assert {d.windowTitle() for d in win.tabifiedDockWidgets(win.docks["details"])} >= {"Cast", "Takes"}
    win.close()
