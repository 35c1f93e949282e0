"""The desktop's session and controller layer: between the studio's plain-Python layers and the widgets.

Why a separate layer: the render worker, the player and the background task
runner are the only places where threads meet the GUI. Everything that crosses
from a worker thread to the GUI thread is a frozen dataclass from
:mod:`studio.desktop.messages` carried by a Qt signal (queued connection), so no widget
is ever touched off the GUI thread and no mutable state is shared by accident.

Modules here that use no Qt classes (``messages``, ``jobqueue``, ``playback``,
``sinks``, ``snapshot``, ``facts``, ``takes``, ``search``, ...) hold the logic and are
tested without a QApplication; the ones that do (``tasks``, ``render_worker``,
``monitor``, ``preview``, ``session``, ``logsetup``, ...) only move values across
threads. Importing the package applies :mod:`studio.desktop.compat` first.
"""

from studio.desktop.compat import guard_singleton_refcounts as _guard

_guard()  # before anything else calls into Qt (see studio.desktop.compat)
