"""The Voices window beyond the Piper catalogue, with real widgets and a real HTTP server on
127.0.0.1 that drops each file's first transfer halfway: a Kokoro pack listed beside Piper
voices, fetched, resumed on the second try and chosen at once; a Coqui model by name whose
non-commercial licence is shown and must be agreed to before a byte arrives; the voice
mixer heard (Listen) before it is saved (Save as...) and then listed."""

from __future__ import annotations

import functools
import http.server
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox
from support.coqui import coqui_voices  # noqa: F401 - a fixture, named as an argument
from support.coqui_server import _RangeHandler, coqui_server  # noqa: F401 - a fixture, named as an argument
from support.presets import CPU_ONLY, SETTINGS, machine
from support.presets import library_row as row

from studio.desktop.facts import list_voice_choices
from studio.desktop.sinks import NullSink
from studio.desktop.voice_library import VoiceLibrary
from studio.engine.kokoro.packs import load_pack, offline_packs_file
from studio.ui.voices_dialog import VoicesDialog

WAIT = 120_000
NO_CATALOGUE = "http://127.0.0.1:9"  # nothing listens: the Piper catalogue is unavailable, the rest still lists
needs_kokoro = pytest.mark.skipif(offline_packs_file() is None, reason="the offline Kokoro voices are not installed")


@pytest.fixture
def voices_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "my-voices"
    monkeypatch.setenv("STUDIO_VOICES_DIR", str(folder))
    monkeypatch.setenv("TTS_HOME", str(tmp_path / "tts-home"))
    return folder


@pytest.fixture
def served(tmp_path: Path):
    """A folder served with ranges, each file's first transfer cut halfway."""
    root = tmp_path / "served"
    (root / "voices").mkdir(parents=True)
    _RangeHandler.dropped = set()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_RangeHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


def open_dialog(qtbot, **library) -> VoicesDialog:  # noqa: ANN001, ANN003
    dlg = VoicesDialog(SETTINGS, ["en", "fr"], library=VoiceLibrary(url=NO_CATALOGUE, timeout=10, **library))
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.set_facts(replace(machine(CPU_ONLY), voices=list_voice_choices()))  # the voices of this folder
    return dlg


def answer(panel, button: QMessageBox.StandardButton) -> list[str]:  # noqa: ANN001
    """Click ``button`` on the licence box as soon as it is shown; what it said."""
    said: list[str] = []

    def click() -> None:
        box = panel.licence_box
        if box is not None and box.isVisible():
            said.append(box.text())
            timer.stop()
            box.button(button).click()

    timer = QTimer(panel)
    timer.timeout.connect(click)
    timer.start(50)
    return said


@needs_kokoro
def test_a_kokoro_pack_is_listed_fetched_resumed_and_chosen(qtbot, voices_dir, served) -> None:  # noqa: ANN001
    torch = pytest.importorskip("torch")
    url, root = served
    pack = load_pack(offline_packs_file(), "jf_tebukuro")  # an installed pack served as af_heart
    torch.save(torch.from_numpy(pack.copy()), root / "voices" / "af_heart.pt")
    dlg = open_dialog(qtbot, fetch_url=url)
    panel, library = dlg.library, dlg.library.library
    qtbot.waitUntil(lambda: bool(row(dlg, "kokoro:af_heart")), timeout=WAIT)
    assert row(dlg, "kokoro:af_heart") == ["kokoro:af_heart", "en_US", "Kokoro pack", "", ""]
    assert row(dlg, "kokoro:model-fp32")[2:] == ["Kokoro model FP32", "", ""]
    assert "catalogue not available" in panel.status.text()

    panel.select("kokoro:af_heart")
    assert panel.download_btn.isEnabled()
    library.progress.connect(lambda p: panel.cancel_btn.isEnabled() and panel.cancel_btn.click())
    with qtbot.waitSignal(library.cancelled, timeout=WAIT):
        panel.download_btn.click()
    assert "cancelled" in panel.status.text() and not (voices_dir / "kokoro" / "af_heart.pt").exists()
    assert "kokoro:af_heart" not in [v.id for v in list_voice_choices()]
    library.progress.disconnect()
    _RangeHandler.dropped = set()  # the next transfer is cut halfway again
    with qtbot.waitSignal(library.failed, timeout=WAIT) as cut:
        panel.download_btn.click()
    assert "run it again to resume" in cut.args[0].message
    assert (voices_dir / "kokoro" / "af_heart.pt.part").is_file() and not (voices_dir / "kokoro" / "af_heart.pt").exists()
    seen: list = []
    library.progress.connect(seen.append)
    with qtbot.waitSignal(library.installed, timeout=WAIT) as got:
        panel.download_btn.click()
    size = (root / "voices" / "af_heart.pt").stat().st_size
    assert seen[0].done > size // 3 and seen[-1].done == size  # resumed from the half that had arrived
    assert got.args[0].id == "kokoro:af_heart" and got.args[0].mixable
    assert np.array_equal(load_pack(voices_dir / "kokoro" / "af_heart.pt", "af_heart"), pack)
    qtbot.waitUntil(lambda: row(dlg, "kokoro:af_heart")[-1] == "installed", timeout=WAIT)
    assert dlg.combos["en"].findData("kokoro:af_heart") >= 0  # chosen at once, no restart
    assert dlg.mixer.parts[0][0].findData("kokoro:af_heart") >= 0  # and offered to the mixer


def test_a_coqui_model_by_name_shows_its_licence_and_needs_agreement(qtbot, voices_dir, coqui_server) -> None:  # noqa: ANN001, F811
    models, _ = coqui_server
    tiny = models["tts_models"]["en"]["tiny"]
    tiny["tacotron2-nc"] = {**tiny["tacotron2-test"], "license": "CC BY-NC-ND 4.0"}
    name = "tts_models/en/tiny/tacotron2-nc"
    dlg = open_dialog(qtbot, catalogue=models)
    panel, library = dlg.library, dlg.library.library
    qtbot.waitUntil(lambda: "catalogue not available" in panel.status.text(), timeout=WAIT)
    panel.by_name.setText("tts_models/en/tiny/nothing")
    with qtbot.waitSignal(library.failed, timeout=WAIT):
        panel.by_name_btn.click()
    assert "unknown Coqui model" in panel.status.text()  # one line, nothing else stops
    panel.by_name.setText(name)

    said = answer(panel, QMessageBox.StandardButton.No)
    panel.by_name_btn.click()
    qtbot.waitUntil(lambda: "not accepted" in panel.status.text(), timeout=WAIT)
    assert "CC BY-NC-ND 4.0: non-commercial use only (a book read with it cannot be sold)" in said[0]
    assert not (voices_dir.parent / "tts-home").exists()  # nothing fetched without agreement

    fetched: list[object] = []
    cut: list[object] = []
    library.fetched.connect(fetched.append)
    library.failed.connect(cut.append)
    for tries in range(1, 4):  # the model, then its vocoder, each cut once: a try resumes what the last left
        said = answer(panel, QMessageBox.StandardButton.Yes)
        with qtbot.waitSignals([library.licenceReady], timeout=WAIT):
            panel.by_name_btn.click()
        # done or cut, whichever comes (waiting on the signal alone sat out its whole timeout per cut)
        qtbot.waitUntil(lambda: len(fetched) + len(cut) == tries, timeout=WAIT)
        assert said and "non-commercial" in said[0]
        if fetched:
            break
        assert "run it again to resume" in panel.status.text()
    voice_id = name
    qtbot.waitUntil(lambda: row(dlg, voice_id)[-1:] == ["installed"], timeout=WAIT)
    assert dlg.default_voice.findData(voice_id) >= 0
    folder = voices_dir.parent / "tts-home" / "tts" / "tts_models--en--tiny--tacotron2-nc"
    assert (folder / "model.pth").is_file() and (folder / "vocoder" / "model.pth").is_file()


@needs_kokoro
@pytest.mark.slow
def test_the_mixer_is_heard_then_saved_and_listed(qtbot, voices_dir) -> None:  # noqa: ANN001
    sinks: list[NullSink] = []
    dlg = open_dialog(qtbot, sink_factory=lambda: sinks.append(NullSink(speed=8.0)) or sinks[-1])
    mixer, library = dlg.mixer, dlg.library.library
    (a, wa), (b, wb) = mixer.parts
    a.setCurrentIndex(a.findData("kokoro:jf_alpha"))
    b.setCurrentIndex(b.findData("kokoro:jm_kumo"))
    wa.setValue(0.6)
    wb.setValue(0.4)
    assert mixer.recipe() == "kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4"

    with qtbot.waitSignal(library.blendHeard, timeout=600_000) as heard:
        mixer.listen_btn.click()
    sample = heard.args[0]
    assert sample.played == "" and sample.seconds > 2 and Path(sample.path).stat().st_size > 24000 * 2
    qtbot.waitUntil(lambda: sinks[-1].consumed > 0, timeout=WAIT)  # it is being heard
    assert "Save as" in mixer.status.text() and not (voices_dir / "kokoro").exists()  # heard, nothing saved

    mixer.name.setText("warm")
    with qtbot.waitSignal(library.installed, timeout=WAIT) as saved:
        mixer.save_btn.click()
    assert saved.args[0].id == "kokoro:warm" and "kokoro:warm is saved" in mixer.status.text()
    assert dlg.default_voice.findData("kokoro:warm") >= 0 and a.findData("kokoro:warm") >= 0
    qtbot.waitUntil(lambda: row(dlg, "kokoro:warm")[-1:] == ["installed"], timeout=WAIT)
