"""The handle on ``project.sqlite``: one connection per thread and the one write transaction.

Why a handle of its own, and not ``Project._conn()``: the project's facets
(chapters, takes, lexicon, ...) each read and write a few tables of the same
database with the same guarantees as the store -- a reader per thread, writes
serialised by one lock, every write one IMMEDIATE transaction rolled back on any
exception, a full disk reported as :class:`~studio.core.errors.DiskFull`. A facet is
handed this handle (``project.db``) and needs nothing private of the store.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from studio.core.errors import DiskFull, ProjectError
from studio.project.schema import configure, ensure_schema
from studio.project.undo import install_triggers


class ProjectDb:
    """Per-thread connections to one project database (opened, configured and migrated on first use).

    SQLite connections are not to be shared while in use, so each thread gets its
    own; :meth:`write` holds a lock around its transaction, which is what one render
    thread plus GUI readers need.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._conns: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._conns_lock = threading.Lock()
        self._write_lock = threading.RLock()
        self._closed = False

    def read(self) -> sqlite3.Connection:
        """This thread's connection (autocommit: each statement reads a consistent state)."""
        conn = getattr(self._local, "conn", None)
        if self._closed:
            if conn is not None:  # left open by close() because this thread might have been using it
                self._local.conn = None
                conn.close()
            raise ProjectError(f"project {self.path.parent} is closed")
        if conn is not None:
            return conn
        try:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as err:
            raise ProjectError(f"cannot open {self.path}: {err}") from err
        try:
            configure(conn)
            ensure_schema(conn, str(self.path))
            install_triggers(conn)  # this connection logs what undoes a producer's edit
        except sqlite3.DatabaseError as err:
            conn.close()
            if sqlite_full(err):
                raise DiskFull(self.path) from err
            raise ProjectError(f"{self.path} is damaged or not a project database ({err})") from err
        except BaseException:
            conn.close()
            raise
        self._local.conn = conn
        with self._conns_lock:
            self._conns.append((threading.current_thread(), conn))
        return conn

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """No other thread writes while this runs (its own :meth:`write` transactions may)."""
        with self._write_lock:
            yield

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction; rolled back on any exception (incl. Ctrl-C)."""
        with self._write_lock:
            conn = self.read()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as err:
                raise write_error(err, self.path) from err
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if isinstance(exc, sqlite3.Error):
                    raise write_error(exc, self.path) from exc
                raise

    def close(self) -> None:
        """Close this thread's connection and those of threads that have ended. Idempotent.

        Why not every connection: closing a connection while another thread runs a
        statement on it crashes the interpreter (seen: a background read of proof
        results during a window's close). A live thread's connection is closed by
        that thread at its next :meth:`read` (which then says the project is closed),
        or with this object when the thread ends.
        """
        self._closed = True
        me = threading.current_thread()
        with self._conns_lock:
            conns = self._conns
            self._conns = [(t, c) for t, c in conns if t is not me and t.is_alive()]
        for thread, conn in conns:
            if thread is me or not thread.is_alive():
                try:
                    conn.close()
                except sqlite3.Error:  # pragma: no cover - closing must not fail loudly
                    pass
        if getattr(self._local, "conn", None) is not None:
            self._local.conn = None


def sqlite_full(err: sqlite3.Error) -> bool:
    """SQLITE_FULL: "database or disk is full" (the disk, not a size limit of ours)."""
    return getattr(err, "sqlite_errorname", "") == "SQLITE_FULL" or "disk is full" in str(err)


def write_error(err: sqlite3.Error, db_path: Path) -> Exception:
    """The error a failed write transaction becomes: DiskFull, or ProjectError."""
    if sqlite_full(err):
        return DiskFull(db_path)
    return ProjectError(f"cannot write {db_path}: {err}")
