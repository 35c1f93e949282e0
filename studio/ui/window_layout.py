"""Where the main window first goes and how its docks are tabbed on a small screen.

Why apart from the window: these are plain rules about sizes (a test checks them for a
1366 x 768 screen without building a window), and the window is long enough already.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize

#: the first window's size where the screen has room for it
PREFERRED_SIZE = (1360, 860)
#: below this free area (a 1366 x 768 or 1280 x 800 laptop) the window starts maximized, its docks in tabs
SMALL_SCREEN = (1440, 900)
#: what a window manager's title bar and frame take beyond the free area's top-left (Qt knows only after showing)
FRAME_ROOM = (16, 48)
#: tabbed docks (View > Tab the Docks): Details' column, and the queue's row (the waveform gets its height there)
RIGHT_TABS = ("readouts", "takes", "progress", "cast")
BOTTOM_TABS = ("waveform", "proof", "log")
#: the tabbed right column's width: the Cast panel's buttons side by side (and the Takes table)
RIGHT_COLUMN_WIDTH = 512
BOTTOM_ROW_HEIGHT = 270


def small_screen(room: QSize) -> bool:
    """A screen whose free area is below :data:`SMALL_SCREEN` (its window starts maximized, docks tabbed)."""
    return room.width() < SMALL_SCREEN[0] or room.height() < SMALL_SCREEN[1]


def first_geometry(room: QRect) -> QRect:
    """The window's first place: :data:`PREFERRED_SIZE`, or less so that it and its frame fit ``room``
    (the screen's available geometry: panels and docks left out), at the area's top-left."""
    width = min(PREFERRED_SIZE[0], room.width() - FRAME_ROOM[0])
    height = min(PREFERRED_SIZE[1], room.height() - FRAME_ROOM[1])
    return QRect(room.x() + FRAME_ROOM[0] // 2, room.y() + FRAME_ROOM[1] - FRAME_ROOM[0] // 2, width, height)
