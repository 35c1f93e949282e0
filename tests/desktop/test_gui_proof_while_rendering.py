"""The desktop hears a chapter back while the book renders: its proof results are there before the
next chapter's render ends (real window, real model worker and voice, real embedded Whisper base)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.window import WAIT, make_window, open_and_wait, wait_jobs_done

from studio.project.proofs import UNCHECKED, results

pytestmark = pytest.mark.slow

BOOK = ("# Chapter One\n\nThe boat left the harbour at dawn. The gulls followed it out to sea.\n\n"
        "# Chapter Two\n\nBy noon the wind had turned. The crew pulled in the sails.\n")
LISTEN_WAIT = max(WAIT, 300_000)


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))


def test_desktop_hears_a_chapter_before_the_next_chapter_is_rendered(qtbot, tmp_path: Path,  # noqa: ANN001
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("STUDIO_CACHE_DIR", raising=False)
    win = make_window(qtbot, tmp_path)
    win.proof.auto.setChecked(True)
    open_and_wait(qtbot, win, write_manuscript(tmp_path / "books", BOOK, "boat.md"))
    session = win.session
    project = session.project
    first, second = project.sentences([0]), project.sentences([1])
    seen: list[tuple[str, int]] = []  # the order a producer sees things in

    def states(_delta: object) -> None:
        if ("rendered", 1) not in seen and all(r.state == "done" for r in project.sentences([1])):
            heard = results(project.db, first)
            seen.append(("rendered", 1))
            seen.append(("first chapter heard then", int(all(heard[r.id].status != UNCHECKED for r in first))))

    session.statesChanged.connect(states)
    win.proof_ctl.chapterHeard.connect(lambda h: seen.append(("heard", h.chapter)))
    said: list[tuple[object, str, str, str]] = []  # while a chapter is heard: the queue's row, its overall line, the readouts
    win.proof_ctl.listening.connect(lambda state: said.append((
        state, str(win.queue.model.index(0, 1).data() or ""), win.queue.overall.format(), win.readouts.status.text())))
    session.render_chapters([0, 1])
    wait_jobs_done(qtbot, win)
    qtbot.waitUntil(lambda: ("heard", 1) in seen and not win.proof_ctl._running, timeout=LISTEN_WAIT)
    assert seen.index(("heard", 0)) < seen.index(("rendered", 1)), seen
    assert ("first chapter heard then", 1) in seen, seen
    assert all(results(project.db, second)[r.id].status != UNCHECKED for r in second)
    # the dock lists both chapters' states
    qtbot.waitUntil(lambda: len(win.proof.view.chapters) == 2, timeout=WAIT)

    # what was being heard was said as it was heard, from 0 % on, and not said once it was over
    heard = [(state, row, bar, status) for state, row, bar, status in said if state is not None]
    assert heard and {state.chapter for state, *_ in heard} == {0, 1}, said
    assert heard[0][0].done == 0 and heard[0][0].total == len(first)  # said before the recogniser is loaded
    for state, row, bar, status in heard:
        words = f"Proof-listening chapter {state.chapter + 1}: {state.percent} %"
        assert words.lower() in row.lower(), (row, said)
        assert status in (words, f"Rendering \u00b7 {words}"), (status, said)
    last = [(row, bar) for state, row, bar, _ in heard if state.chapter == 1]
    assert any(row == bar == "Proof-listening chapter 2: " + row.rsplit(": ", 1)[1] for row, bar in last), last
    assert said[-1][0] is None and "Proof-listening" not in win.queue.overall.format()
