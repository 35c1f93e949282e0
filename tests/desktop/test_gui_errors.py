"""Errors are never silent: background tasks, uncaught exceptions, the log file."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path

import pytest

import support.gui  # noqa: F401 - binding guard
from studio.core.errors import ProjectError
from studio.desktop.logsetup import install_excepthook, log_file_path, setup_file_logging
from studio.desktop.messages import ErrorInfo
from studio.desktop.tasks import TaskRunner


def test_log_file_lives_in_the_state_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert log_file_path() == tmp_path / "state" / "studio" / "studio.log"
    path = setup_file_logging(path=tmp_path / "log" / "studio.log")
    try:
        logging.getLogger("studio.test").error("something to read later")
        for h in logging.getLogger().handlers:
            h.flush()
        assert "something to read later" in path.read_text()
    finally:
        for h in list(logging.getLogger().handlers):
            if getattr(h, "baseFilename", "") == str(path):
                logging.getLogger().removeHandler(h)
                h.close()


def test_uncaught_exceptions_are_logged_and_shown(qtbot, caplog: pytest.LogCaptureFixture) -> None:  # noqa: ANN001
    shown: list[ErrorInfo] = []
    before = (sys.excepthook, threading.excepthook)
    undo = install_excepthook(shown.append)
    assert (sys.excepthook, threading.excepthook) != before  # both hooks are ours now
    try:
        try:
            raise ValueError("boom in a slot")
        except ValueError:
            sys.excepthook(*sys.exc_info())
        qtbot.waitUntil(lambda: len(shown) == 1, timeout=5000)
        assert shown[0].message == "Unexpected error: ValueError: boom in a slot" and "Traceback" in shown[0].detail

        def worker() -> None:
            raise RuntimeError("boom in a thread")

        t = threading.Thread(target=worker, name="test-thread")
        t.start()
        t.join()
        qtbot.waitUntil(lambda: len(shown) == 2, timeout=5000)
        assert "boom in a thread" in shown[1].message
        assert "in thread test-thread" in caplog.text and "boom in a slot" in caplog.text
    finally:
        undo()
    assert (sys.excepthook, threading.excepthook) == before  # undo gives the previous hooks back


def test_task_errors_reach_the_gui_thread_readably(qtbot, caplog: pytest.LogCaptureFixture) -> None:  # noqa: ANN001
    fallback: list[ErrorInfo] = []
    runner = TaskRunner(on_error=fallback.append)
    got: list[object] = []
    errors: list[ErrorInfo] = []
    progress: list[int] = []

    def counting(report) -> int:  # noqa: ANN001
        for i in range(3):
            report(i)
        return 42

    runner.run(counting, on_done=got.append, on_progress=progress.append)

    def refuse() -> None:
        raise ProjectError("the project folder is read-only")

    runner.run(refuse, on_error=errors.append, action="save the settings")
    runner.run(lambda: 1 / 0, action="divide")  # no handler: the default one shows it
    qtbot.waitUntil(lambda: runner.pending == 0, timeout=10000)
    assert got == [42] and progress == [0, 1, 2]
    assert errors[0].message == "the project folder is read-only" and errors[0].title == "Could not save the settings"
    assert fallback[0].message.startswith("Unexpected error: ZeroDivisionError") and "Traceback" in fallback[0].detail
    assert "ZeroDivisionError" in caplog.text  # logged with its traceback
    runner.wait()


def test_synchronous_runner_for_scripts() -> None:
    runner = TaskRunner(synchronous=True)
    out: list[int] = []
    runner.run(lambda: 7, on_done=out.append)
    assert out == [7] and runner.pending == 0  # ran inline, callback delivered at once
