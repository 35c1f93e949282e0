"""The bridge between the studio's plain-Python layers and Qt.

Why a separate layer: the render worker, the player and the background task
runner are the only places where threads meet the GUI. Everything that crosses
from a worker thread to the GUI thread is a frozen dataclass from
:mod:`studio.qt.messages` carried by a Qt signal (queued connection), so no widget
is ever touched off the GUI thread and no mutable state is shared by accident.

Modules here that use no Qt classes (``messages``, ``jobqueue``, ``playback``,
``sinks``, ``snapshot``, ``facts``, ``takes``, ``search``, ...) hold the logic and are
tested without a QApplication; the ones that do (``tasks``, ``render_worker``,
``monitor``, ``preview``, ``session``, ``logsetup``, ...) only move values across
threads. Importing the package applies :mod:`studio.qt.compat` first.
"""

from studio.qt.compat import guard_singleton_refcounts as _guard

_guard()  # before anything else calls into Qt (see studio.qt.compat)
