"""The export dialog's publish-ready path with real widgets (pytest-qt): formats,
the ACX option, progress, and the measurements and verdicts it shows.

The project is rendered once with the real bundled voice; the dialog then drives
the real session, publish job, ffmpeg and mutagen.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from support.gui import shared_factory
from support.audio import META, speechlike
from support.render import rendered_test_book
from studio.audio.acx import check_file
from studio.audio.containers import write_delivery
from studio.audio.subtitles import parse_cues
from studio.audio.tags import Track
from studio.delivery.manifest import PublishedFile
from studio.delivery.publish import PublishResult
from studio.desktop.messages import PackageChoices
from studio.desktop.session import ProjectSession
from studio.desktop.sinks import NullSink
from studio.ui.main_window import MainWindow

pytestmark = pytest.mark.slow
WAIT = 120_000  # ms


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rendered_test_book(tmp_path_factory.mktemp("gui-publish") / "book.studio")


@pytest.fixture
def rendered_window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rendered: Path):  # noqa: ANN001, ANN201
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    session = ProjectSession(build=shared_factory(), sink_factory=lambda: NullSink(speed=8.0),
                             readout_interval=0.25)
    win = MainWindow(session, QSettings(str(tmp_path / "studio.ini"), QSettings.Format.IniFormat))
    win.proof.auto.setChecked(False)  # proof-listening after renders: tests/desktop/test_proof_gui.py
    qtbot.addWidget(win)
    win.show()
    win.open_path(rendered)
    qtbot.waitUntil(lambda: win.session.snapshot is not None and win.book.model.rowCount() > 0, timeout=WAIT)
    yield win
    win.close()


def table(dlg) -> list[list[str]]:  # noqa: ANN001
    t = dlg.results
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def test_m4b_is_published_with_progress_and_acx_results(qtbot, rendered_window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    rendered_window.open_export()
    dlg = rendered_window.export_dialog
    assert dlg.format.currentData() == "m4b" and dlg.publishing()
    assert dlg.publish.isChecked() and not dlg.publish.isEnabled()  # M4B is publish-ready only
    dlg.set_format("wav")
    assert dlg.publish.isEnabled() and not dlg.publish.isChecked() and not dlg.publishing()
    dlg.set_format("flac")
    assert dlg.publish.isChecked() and not dlg.publish.isEnabled()
    dlg.set_format("m4b")
    assert dlg.checked_chapters() == [0, 1]
    dlg.folder.setText(str(tmp_path / "out"))
    seen: list = []
    orig = dlg.on_progress
    dlg.on_progress = lambda p: (seen.append(p), orig(p))  # type: ignore[method-assign]
    with qtbot.waitSignal(dlg.publishRequested, timeout=WAIT) as sent:
        dlg.export_btn.click()
    assert sent.args[1] == "m4b" and sent.args[2] == [0, 1] and sent.args[3] == PackageChoices()
    qtbot.waitUntil(lambda: dlg.result_published is not None, timeout=WAIT)
    assert dlg.results.isVisible() and dlg.open_btn.isVisible()
    rows = table(dlg)
    assert [r[0] for r in rows] == ["Test Book.m4b", "Test Book - Retail sample.mp3"]
    assert all(r[6] == "levels pass" for r in rows)  # ACX takes one MP3 per chapter: not an "ACX check"
    assert rows[0][2].endswith(" dB") and -23 <= float(rows[0][2].split()[0]) <= -18
    assert float(rows[0][3].split()[0]) <= -3.0
    assert "Levels checked: 2 pass, 0 fail" in dlg.status.text()
    assert dlg.progress.value() == dlg.progress.maximum()
    assert seen and seen[0].total == 4 and seen[0].current == "Opening credits"  # progress per chapter
    # one unit from the first count to the last (it read "1/3 chapters", then "2/2" for the files)
    assert {p.total for p in seen} == {4} and {p.unit for p in seen} == {"parts (chapters and credits)"}
    assert dlg.progress.text() == "4/4 parts (chapters and credits)"
    book = tmp_path / "out" / "Test Book.m4b"
    chapters = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_chapters", "-of", "json", str(book)],
                                         capture_output=True, text=True, check=True).stdout)["chapters"]
    assert [c["tags"]["title"] for c in chapters] == ["Opening credits", "Morning", "Evening", "Closing credits"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["files"][0]["acx"]["passed"] is True
    assert rendered_window.qsettings.value("export/format") == "m4b"


def test_mp3_publish_choice_is_remembered_and_plain_export_still_works(qtbot, rendered_window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    rendered_window.open_export()
    dlg = rendered_window.export_dialog
    dlg.set_format("mp3")
    dlg.publish.setChecked(True)
    assert dlg.credits.isEnabled() and dlg.opening.isEnabled() and dlg.sample_chapter.isEnabled()
    dlg.closing.setPlainText("The end.\nMade with care.")
    dlg.sample_chapter.setCurrentIndex(dlg.sample_chapter.findData(1))
    dlg.credits.setChecked(False)
    assert not dlg.opening.isEnabled() and not dlg.closing.isEnabled()
    dlg.credits.setChecked(True)
    dlg.folder.setText(str(tmp_path / "pub"))
    with qtbot.waitSignal(dlg.publishRequested, timeout=WAIT) as sent:
        dlg.export_btn.click()
    assert sent.args[3] == PackageChoices(closing="The end.\nMade with care.", sample_chapter=1)
    qtbot.waitUntil(lambda: dlg.result_published is not None, timeout=WAIT)
    assert [r[0] for r in table(dlg)] == ["00 - Opening credits.mp3", "01 - Morning.mp3", "02 - Evening.mp3",
                                          "03 - Closing credits.mp3", "Test Book - Retail sample.mp3"]
    assert all(r[6] == "ACX pass" for r in table(dlg))
    closing = parse_cues((tmp_path / "pub" / "03 - Closing credits.srt").read_text(encoding="utf-8"))
    assert [c[2] for c in closing] == ["The end.", "Made with care."]
    sample = parse_cues((tmp_path / "pub" / "Test Book - Retail sample.srt").read_text(encoding="utf-8"))
    assert sample[0][2] == "It got dark."  # the chosen chapter, Evening
    assert sorted(p.suffix for p in (tmp_path / "pub").iterdir()).count(".srt") == 5
    dlg.close()
    rendered_window.open_export()
    dlg = rendered_window.export_dialog
    assert dlg.format.currentData() == "mp3" and dlg.publish.isChecked()  # remembered
    dlg.set_format("wav")
    dlg.publish.setChecked(False)
    dlg.folder.setText(str(tmp_path / "plain"))
    dlg.export_btn.click()
    qtbot.waitUntil(lambda: dlg.result_progress is not None, timeout=WAIT)
    assert dlg.result_published is None and not dlg.results.isVisible()
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == ["01 - Morning.wav", "02 - Evening.wav"]


def test_a_failing_file_shows_its_reasons(qtbot, rendered_window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    hot = write_delivery(tmp_path / "hot.mp3", np.clip(speechlike(level=1.4), -1, 1), 44100, "mp3", META, Track("hot"))
    report = check_file(hot)
    result = PublishResult((PublishedFile(hot, "hot", (), report.levels, report, "0" * 64),), tmp_path / "manifest.json")
    rendered_window.open_export()
    dlg = rendered_window.export_dialog
    dlg.on_published(result)
    (row,) = table(dlg)
    assert row[6].startswith("levels FAIL: RMS ") and "peak " in row[6]
    assert "FAIL" in dlg.results.item(0, 0).toolTip() and "-23 to -18 dB" in dlg.results.item(0, 6).toolTip()
    assert "0 pass, 1 fail" in dlg.status.text()


def test_a_second_export_into_the_same_folder_asks_and_gets_its_own_manifest(
        qtbot, rendered_window: MainWindow, tmp_path: Path) -> None:  # noqa: ANN001
    from PySide6.QtWidgets import QMessageBox

    rendered_window.open_export()
    dlg = rendered_window.export_dialog
    dlg.set_format("mp3")
    dlg.publish.setChecked(True)
    dlg.credits.setChecked(False)
    dlg.sample.setChecked(False)
    dlg.folder.setText(str(tmp_path / "out"))
    dlg.export_btn.click()
    qtbot.waitUntil(lambda: dlg.result_published is not None, timeout=WAIT)
    first = (tmp_path / "out" / "manifest.json").read_bytes()
    assert dlg.report_area.minimumHeight() >= 2 * dlg.status.fontMetrics().lineSpacing()  # the report's own lines
    assert dlg.replace_box is None  # an empty folder: nothing asked

    dlg.result_published = None
    dlg.export_btn.click()  # the same folder again: asked first, nothing written yet
    box = dlg.replace_box
    assert isinstance(box, QMessageBox) and box.isVisible() and "manifest.json" in box.text()
    assert dlg.result_published is None and (tmp_path / "out" / "manifest.json").read_bytes() == first
    beside = next(b for b in box.buttons() if b.text() == "Export to out 2")
    beside.click()  # a folder of its own, beside the first
    qtbot.waitUntil(lambda: dlg.result_published is not None, timeout=WAIT)
    assert dlg.folder.text() == str(tmp_path / "out 2")
    second = json.loads((tmp_path / "out 2" / "manifest.json").read_text())
    assert [f["file"] for f in second["files"]] == ["01 - Morning.mp3", "02 - Evening.mp3"]
    assert (tmp_path / "out" / "manifest.json").read_bytes() == first  # the first export's manifest kept

    dlg.result_published = None
    written = (tmp_path / "out" / "manifest.json").stat().st_mtime_ns
    dlg.folder.setText(str(tmp_path / "out"))
    dlg.export_btn.click()
    replace = next(b for b in dlg.replace_box.buttons() if b.text() == "Replace")
    replace.click()  # the producer's word: the earlier export is replaced
    qtbot.waitUntil(lambda: dlg.result_published is not None, timeout=WAIT)
    assert (tmp_path / "out" / "manifest.json").stat().st_mtime_ns != written and dlg.folder.text() == str(tmp_path / "out")
    dlg.close()
