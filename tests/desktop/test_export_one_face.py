"""One export, two faces (issue 32, point 3): the app runs the command line's export with the same
options (proof summary in the manifest, the --require-proof choice as a check box, the proof state
said before export), says its report in the dialog's words, and keeps each project's own folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from support.render import rendered_test_book

from studio.delivery.export_book import ProofBefore
from studio.project.proofs import ProofSummary
from studio.desktop.export_words import in_app_words
from studio.ui.main_window import MainWindow

WAIT = 120_000  # ms
pytestmark = pytest.mark.usefixtures("private_dirs")  # the window is the plugin's


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rendered_test_book(tmp_path_factory.mktemp("one-face") / "book.studio")


def opened(qtbot, win: MainWindow, path: Path) -> None:  # noqa: ANN001
    win.open_path(path)
    qtbot.waitUntil(lambda: win.session.snapshot is not None and Path(win.session.snapshot.folder) ==
                    (path if path.suffix == ".studio" else path.with_suffix(".studio")), timeout=WAIT)


def test_app_export_is_the_cli_export_in_the_apps_words(qtbot, window: MainWindow, rendered: Path,  # noqa: ANN001
                                                         tmp_path: Path) -> None:
    project = tmp_path / "book.studio"
    shutil.copytree(rendered, project)
    opened(qtbot, window, project)
    window.open_export()
    dlg = window.export_dialog
    qtbot.waitUntil(lambda: "not listened yet" in dlg.proof_line.text(), timeout=WAIT)
    assert dlg.minimumSizeHint().height() <= 700  # the dialog fits a 1280 x 720 screen too
    assert "2 chapters not listened yet" in dlg.proof_line.text()  # said before the export, as the Proof dock says it
    dlg.chapters.item(1).setCheckState(Qt.CheckState.Unchecked)  # for the chapters ticked
    qtbot.waitUntil(lambda: "1 chapter not listened yet" in dlg.proof_line.text(), timeout=WAIT)
    dlg.chapters.item(1).setCheckState(Qt.CheckState.Checked)
    dlg.set_format("mp3")
    dlg.folder.setText(str(tmp_path / "refused"))
    dlg.require_proof.setChecked(True)  # the command line's --require-proof
    dlg.export_btn.click()
    qtbot.waitUntil(lambda: "Export failed" in dlg.status.text(), timeout=WAIT)
    assert "Only when proof-listened" in dlg.status.text() and "--" not in dlg.status.text()
    assert "Proof dock" in dlg.status.text() and "studio proof" not in dlg.status.text()
    assert "--" not in window.errors[-1].message and not (tmp_path / "refused" / "manifest.json").exists()

    dlg.require_proof.setChecked(False)
    dlg.folder.setText(str(tmp_path / "out"))
    dlg.sample_chapter.setCurrentIndex(dlg.sample_chapter.findData(1))  # a short chapter: a warning about it
    dlg.export_btn.click()
    qtbot.waitUntil(lambda: dlg.result_published is not None, timeout=WAIT)
    text = dlg.status.text()
    assert "ACX check: " in text and "Acx" not in text
    assert "Proof-listening: 2 chapters not listened yet" in text  # the proof summary, as in the manifest
    assert "choose one under Cover art" in text and "choose another chapter beside Retail sample" in text
    assert "--" not in text  # the dialog's controls, never the command line's flags
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["proof"]["summary"] == "2 chapters not listened yet" and len(manifest["proof"]["chapters"]) == 2
    assert any("--cover" in w for w in manifest["warnings"])  # the file keeps the command line's words


def test_each_project_remembers_its_own_export_folder(qtbot, window: MainWindow, rendered: Path,  # noqa: ANN001
                                                     tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "book.studio", tmp_path / "b" / "book.studio"
    shutil.copytree(rendered, first)
    shutil.copytree(rendered, second)
    opened(qtbot, window, first)
    window.open_export()
    dlg = window.export_dialog
    dlg.folder.setText(str(tmp_path / "first-out"))
    dlg.set_format("wav")
    dlg.publish.setChecked(False)
    dlg.export_btn.click()
    qtbot.waitUntil(lambda: dlg.result_progress is not None, timeout=WAIT)
    dlg.close()
    opened(qtbot, window, second)
    window.open_export()
    assert window.export_dialog.folder.text() == str(tmp_path / "b" / "Test Book - audio")  # not the other's
    window.export_dialog.close()
    opened(qtbot, window, first)
    window.open_export()
    assert window.export_dialog.folder.text() == str(tmp_path / "first-out")


def test_words_before_export_and_in_the_app() -> None:
    summaries = {i: ProofSummary(sentences=50, passed=20, to_review=30 if i < 5 else 34) for i in range(6)}
    summaries.update({i: ProofSummary(sentences=50, unchecked=50) for i in range(6, 141)})
    before = ProofBefore(summaries)
    assert before.line() == "184 to review in 6 chapters; 135 chapters not listened yet"  # the Proof dock's words
    assert not before.clean and ProofBefore({0: ProofSummary(sentences=3, passed=3)}).clean
    assert not ProofBefore({0: ProofSummary(sentences=3, passed=1, no_audio=2)}).clean
    said = in_app_words("the retail sample is 40 s long (pick another with --sample-chapter); --format mp3 and --acx")
    assert "--" not in said and "Retail sample" in said and "Format" in said
