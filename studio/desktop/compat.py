"""A guard against a reference-counting bug of the Qt binding on Python < 3.12.

Why this exists: PySide6 6.12.0 (abi3 wheels) returns ``None`` from every void
method, and ``True``/``False`` from ``Signal.emit``, without taking a reference.
On Python 3.12+ those objects are immortal and nothing happens; on 3.11 each call
drops one reference, and after a few thousand calls the interpreter aborts with
"Fatal Python error: none_dealloc" -- any GUI dies within seconds. PySide6 6.11.x
does not have the bug (pinning ``PySide6-Essentials<6.12`` for Python < 3.12 in the
project's dependencies is the proper fix; this module keeps the studio alive on an
install that already has 6.12.0).

The guard measures the leak (64 void calls on a QObject) and, only if it is there,
gives ``None``, ``True`` and ``False`` 2**40 extra references once: the binding's
over-decrements then eat into that reserve (it would take years of calls to use it
up) and never reach zero. Nothing else changes: those three objects are never
freed anyway in a running interpreter.
"""

from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger(__name__)

RESERVE = 1 << 40
_applied = False


def binding_drops_references() -> bool:
    """Whether void PySide calls lose a reference to ``None`` on this interpreter."""
    if sys.version_info >= (3, 12):
        return False  # None/True/False are immortal there
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(64):
        probe.setObjectName("probe")
    return sys.getrefcount(None) < before - 32


def guard_singleton_refcounts() -> bool:
    """Apply the reserve once if the binding leaks (see the module doc); True if applied."""
    global _applied
    if _applied:
        return True
    if not binding_drops_references():
        return False
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += RESERVE
    _applied = True
    try:
        import PySide6

        version = PySide6.__version__
    except Exception:  # noqa: BLE001
        version = "?"
    log.warning(
        "PySide6 %s drops references to None/True/False on Python %d.%d; compensating "
        "(install PySide6-Essentials<6.12 to remove this workaround)", version, *sys.version_info[:2],
    )
    return True
