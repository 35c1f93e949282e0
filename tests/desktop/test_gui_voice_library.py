"""The Voices window's library against a local piper-voices-like server (the bundled voice
served under another name, as the CLI's download test does): the catalogue listed with
language, quality and size; a download with progress and checksum, chosen at once for a
language; Cancel leaves nothing; a corrupt file is refused; Remove.

Real widgets, a real HTTP server on 127.0.0.1, real files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.presets import CPU_ONLY, SETTINGS, machine
from support.presets import library_row as row
from support.voices import TEST_VOICE, _index, voice_server  # noqa: F401 - fixtures

from studio.desktop.voice_library import VoiceLibrary
from studio.ui.voices_dialog import VoicesDialog

WAIT = 120_000


@pytest.fixture
def voices_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "my-voices"
    monkeypatch.setenv("STUDIO_VOICES_DIR", str(folder))
    monkeypatch.setenv("STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    return folder


def publish_index(model: Path, config: Path, **kw) -> None:  # noqa: ANN003
    (model.parents[4] / "voices.json").write_text(json.dumps(_index(model, config, **kw)), encoding="utf-8")


def open_dialog(qtbot, url: str) -> VoicesDialog:  # noqa: ANN001
    dlg = VoicesDialog(SETTINGS, ["en", "fr"], library=VoiceLibrary(url=url, timeout=10))
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.set_facts(machine(CPU_ONLY))
    dlg.tabs.setCurrentWidget(dlg.library)
    return dlg


def test_download_from_the_catalogue_with_progress_choose_it_then_remove(qtbot, voice_server, voices_dir) -> None:  # noqa: ANN001, F811
    base_url, model, config = voice_server
    publish_index(model, config)
    dlg = open_dialog(qtbot, base_url)
    panel = dlg.library
    qtbot.waitUntil(lambda: bool(row(dlg, TEST_VOICE)), timeout=WAIT)
    size = model.stat().st_size + config.stat().st_size
    assert row(dlg, TEST_VOICE) == [TEST_VOICE, "en_GB", "medium", f"{size / 2**20:.1f} MB", ""]
    assert row(dlg, SETTINGS.voice_id)[-1] == "bundled"
    assert "1 in the catalogue" in panel.status.text()

    panel.select(TEST_VOICE)
    assert panel.download_btn.isEnabled() and not panel.remove_btn.isEnabled()
    seen: list = []
    dlg.library.library.progress.connect(seen.append)
    with qtbot.waitSignal(dlg.library.library.installed, timeout=WAIT):
        panel.download_btn.click()
    assert max(p.done for p in seen) == model.stat().st_size and seen[-1].done == config.stat().st_size
    assert (voices_dir / f"{TEST_VOICE}.onnx").stat().st_size == model.stat().st_size
    qtbot.waitUntil(lambda: row(dlg, TEST_VOICE)[-1] == "installed", timeout=WAIT)
    fr = dlg.combos["fr"]
    assert fr.findData(TEST_VOICE) >= 0  # chosen for French passages at once, no restart
    fr.setCurrentIndex(fr.findData(TEST_VOICE))
    assert dlg.chosen_settings().language_voices == {"fr": TEST_VOICE}

    panel.select(TEST_VOICE)
    assert panel.remove_btn.isEnabled()
    with qtbot.waitSignal(dlg.library.library.removed, timeout=WAIT):
        panel.remove_btn.click()
    assert not (voices_dir / f"{TEST_VOICE}.onnx").exists()
    qtbot.waitUntil(lambda: row(dlg, TEST_VOICE)[-1] == "", timeout=WAIT)
    assert dlg.combos["fr"].findData(TEST_VOICE) < 0


def test_cancel_and_a_corrupt_download_leave_nothing(qtbot, voice_server, voices_dir) -> None:  # noqa: ANN001, F811
    base_url, model, config = voice_server
    publish_index(model, config)
    dlg = open_dialog(qtbot, base_url)
    library, panel = dlg.library.library, dlg.library
    qtbot.waitUntil(lambda: bool(row(dlg, TEST_VOICE)), timeout=WAIT)
    panel.select(TEST_VOICE)
    library.progress.connect(lambda p: p.done > 2**20 and panel.cancel_btn.click())  # Cancel after 1 MiB
    with qtbot.waitSignal(library.cancelled, timeout=WAIT):
        panel.download_btn.click()
    assert "cancelled" in panel.status.text()
    assert not voices_dir.exists() or list(voices_dir.iterdir()) == []  # no model, no temp file

    library.progress.disconnect()
    publish_index(model, config, md5_model="0" * 32)  # the catalogue's checksum does not match the file
    with qtbot.waitSignal(library.libraryReady, timeout=WAIT):
        library.load()
    panel.select(TEST_VOICE)
    with qtbot.waitSignal(library.failed, timeout=WAIT) as failed:
        panel.download_btn.click()
    assert "corrupt" in failed.args[0].message and "corrupt" in panel.status.text()
    assert not voices_dir.exists() or list(voices_dir.iterdir()) == []
