"""A new project made in the desktop, and a voice chosen there with no preset picked, get the
preset measured fastest for that voice on this computer (the cached trial, as `studio render`
names it), looked up on the session's task thread, never the window's.

The measurements are given as the cache holds them (``$STUDIO_PRESET_TRIALS``, set by the
suite); the project, its files, the session and the dialog are real.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from support.gui import write_manuscript
from support.presets import CPU_ONLY, SETTINGS, machine
from support.trials import measured
from support.window import WAIT

from studio.engine.kokoro.packs import offline_packs_file
from studio.stack import preset_speed

pytestmark = pytest.mark.usefixtures("private_dirs")
KOKORO = "kokoro:jm_kumo"
needs_kokoro = pytest.mark.skipif(offline_packs_file() is None,
                                  reason="the offline Kokoro voices are not installed (installer/install.sh)")


@pytest.fixture(autouse=True)
def trials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "trials"
    monkeypatch.setenv(preset_speed.TRIALS_ENV, str(folder))
    return folder


def create(qtbot, window, tmp_path: Path, name: str) -> str:  # noqa: ANN001
    """File > New Project's session call; the preset the new project stored."""
    book = write_manuscript(tmp_path / "books", name=f"{name}.md")
    window.session.create(book, tmp_path / "projects" / f"{name}.studio")
    qtbot.waitUntil(lambda: window.session.snapshot is not None
                    and Path(window.session.snapshot.folder).name == f"{name}.studio", timeout=WAIT)
    stored = window.session.project.settings()
    assert stored == window.session.settings  # the session shows what the project stores
    return stored.preset


def test_a_new_project_gets_the_preset_measured_fastest_here_for_its_voice(qtbot, window, tmp_path,
                                                                             monkeypatch) -> None:  # noqa: ANN001
    looked_up: list[bool] = []
    load = preset_speed.load_trial
    monkeypatch.setattr(preset_speed, "load_trial",
                        lambda group: (looked_up.append(threading.current_thread() is threading.main_thread()),
                                       load(group))[1])
    assert create(qtbot, window, tmp_path, "unmeasured") == "fp32-cpu"  # nothing measured: the family's reference
    measured(None, {"fp32-cpu": 0.60, "int8-cpu": 0.40})
    assert create(qtbot, window, tmp_path, "int8") == "int8-cpu"
    assert "Fast on CPU (int8-cpu)" in window.preset_label.full_text  # the status bar names it
    measured(None, {"fp32-cpu": 0.60, "int8-cpu": 0.70})  # the same presets, measured the other way round
    assert create(qtbot, window, tmp_path, "fp32") == "fp32-cpu"
    assert looked_up and not any(looked_up)  # read on the task thread, never the window's


@needs_kokoro
def test_a_voice_chosen_in_the_dialog_brings_its_measured_default_unless_a_preset_was_picked(qtbot) -> None:  # noqa: ANN001
    from studio.desktop.facts import list_voice_choices
    from studio.ui.voices_dialog import VoicesDialog

    measured(KOKORO, {"int8-cpu": 0.70, "fp32-cpu": 0.50})  # Kokoro's float build measured faster here
    dlg = VoicesDialog(replace(SETTINGS, preset="int8-cpu"), ["en"])
    qtbot.addWidget(dlg)
    dlg.set_facts(replace(machine(CPU_ONLY), voices=list_voice_choices(defaults=True)))
    assert dlg.presets.chosen() == ("int8-cpu", "onnx")  # the project's own preset

    def choose(voice_id: str) -> None:
        dlg.default_voice.setCurrentIndex(dlg.default_voice.findData(voice_id))
        dlg.default_voice.activated.emit(dlg.default_voice.currentIndex())  # as the producer's click does

    choose(KOKORO)
    assert dlg.chosen_settings().voice_id == KOKORO and dlg.chosen_settings().preset == "fp32-cpu"
    choose(SETTINGS.voice_id)
    assert dlg.chosen_settings().preset == "int8-cpu"  # back to the project's voice: its own preset
    dlg.presets.tree.setCurrentItem(dlg.presets.row_of("fp32-cpu"))  # the producer picks a preset
    choose(KOKORO)
    choose(SETTINGS.voice_id)
    assert dlg.chosen_settings().preset == "fp32-cpu"  # a pick is kept whatever voice is chosen


@needs_kokoro
def test_a_voice_saved_with_no_preset_gets_its_measured_default(qtbot, window, tmp_path) -> None:  # noqa: ANN001
    measured(KOKORO, {"int8-cpu": 0.70, "fp32-cpu": 0.50})
    assert create(qtbot, window, tmp_path, "book") == "fp32-cpu"
    with qtbot.waitSignal(window.session.settingsChanged, timeout=WAIT):
        window.session.update_settings(replace(window.session.settings, voice_id=KOKORO, preset=""))
    assert window.session.settings.preset == "fp32-cpu" == window.session.project.settings().preset
    measured(KOKORO, {"int8-cpu": 0.50, "fp32-cpu": 0.70})
    with qtbot.waitSignal(window.session.settingsChanged, timeout=WAIT):
        window.session.update_settings(replace(window.session.settings, voice_id=SETTINGS.voice_id, preset=""))
    with qtbot.waitSignal(window.session.settingsChanged, timeout=WAIT):
        window.session.update_settings(replace(window.session.settings, voice_id=KOKORO, preset=""))
    assert window.session.settings.preset == "int8-cpu"
