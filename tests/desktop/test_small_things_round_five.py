"""The producer's day, round five (issue 47): one speed readout, the clone dialog's way to a model,
errors on the tab that caused them, plain words in the history, counts and chapter labels."""

from __future__ import annotations

import time

import pytest
from PySide6.QtWidgets import QWidget

from studio.core.words import counted
from studio.desktop.history import step_words
from studio.desktop.messages import ErrorInfo, JobSpec, JobState, ListeningState, QueueSnapshot, Readout
from studio.desktop.voice_library import VoiceLibrary
from studio.project.numbering import chapter_label
from studio.stack.cloning import cloning_offer
from studio.ui.clone_dialog import CloneDialog
from studio.ui.queue_panel import QueuePanel
from studio.ui.readouts import ReadoutPanel
from studio.ui.voice_library_panel import VoiceLibraryPanel
from studio.ui.voice_mixer_panel import VoiceMixerPanel

pytestmark = pytest.mark.usefixtures("private_dirs")


def test_one_speed_readout_its_inverse_in_the_tooltip(qtbot) -> None:  # noqa: ANN001
    panel = ReadoutPanel()
    qtbot.addWidget(panel)
    panel.show_readout(Readout(at=time.time(), rendering=True, x_real_time=0.807, rtf=1.239, sentences_per_s=0.4,
                               rss_bytes=1 << 30, children=1, cpu_percent=150.0))
    assert "rtf" not in panel.values and panel.values["speed"].text() == "0.8\u00d7 real time"
    assert "real-time factor 1.239" in panel.values["speed"].toolTip()
    assert "1 child process" in panel.values["memory"].toolTip() and "(es)" not in panel.values["memory"].toolTip()


def test_the_clone_dialog_offers_the_model_it_needs_with_its_licence_first(qtbot) -> None:  # noqa: ANN001
    library = VoiceLibrary(catalogue={})  # a model list without it: the licence cannot be read (said, not raised)
    panel = VoiceLibraryPanel(library)
    qtbot.addWidget(panel)
    offer = cloning_offer()
    assert offer.endswith("xtts_v2")  # the family that clones names the model it fetches
    dialog = CloneDialog([], panel, offer)
    assert dialog.add_model.isVisibleTo(dialog) and dialog.add_model.text() == "Add xtts_v2\u2026"
    assert not dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
    dialog.exec = lambda: CloneDialog.DialogCode.Rejected  # the producer pressed "Add the XTTS v2 model..."
    panel.new_voice_from_recording(dialog)
    dialog.add_model.click()
    assert panel.status.text() == f"Reading the licence of {offer}\u2026"  # the licence before a byte
    qtbot.waitUntil(lambda: panel.status.text().startswith("\u26a0"), timeout=30_000)
    assert CloneDialog([offer], None, offer).add_model.isHidden() and CloneDialog([], None, "").add_model.isHidden()


def test_an_error_shows_on_the_tab_that_caused_it(qtbot) -> None:  # noqa: ANN001
    library = VoiceLibrary()
    host = QWidget()
    qtbot.addWidget(host)
    get, mix = VoiceLibraryPanel(library, host), VoiceMixerPanel(library, host)
    before = mix.status.text()
    library.failed.emit(ErrorInfo("kokoro:af_nope is not in the catalogue", "Could not download kokoro:af_nope"))
    assert "af_nope" in get.status.text() and mix.status.text() == before  # a download's error: the Get voices tab
    said = get.status.text()
    library.mixFailed.emit(ErrorInfo("the weights add up to 0", "Could not mix"))
    assert "add up to 0" in mix.status.text() and get.status.text() == said  # a blend's: the Mix voices tab


def test_history_counts_and_chapter_labels_in_plain_words() -> None:
    assert step_words("edit the sentence") == "sentence edit"
    assert step_words("change the project settings") == "settings change"
    assert step_words("cast Ahab") == "cast Ahab" and step_words(None) is None
    assert counted(1, "sentence") == "1 sentence" and counted(2, "sentence") == "2 sentences"
    assert counted(1200, "child process", "child processes") == "1,200 child processes"
    assert chapter_label(4, "Chapter 1. Loomings.") == "Chapter 1. Loomings. (track 5)"  # one number, said once
    assert chapter_label(4, "Loomings") == "5. Loomings"
    assert chapter_label(1, "Etymology", included=False, front_matter=True) == "2. Etymology (front matter, excluded)"
    assert chapter_label(1, "BOOK THE FIRST", included=False) == "BOOK THE FIRST (track 2, excluded)"


def test_the_queue_says_the_first_sentences_time_and_proof_listening(qtbot) -> None:  # noqa: ANN001
    panel = QueuePanel()
    qtbot.addWidget(panel)
    spec = JobSpec("chapters", "3. The Storm", (2,), sentences_hint=12)
    started = time.monotonic() - 12.4
    job = JobState(1, spec, "running", 0, 12, started=started)
    panel.set_snapshot(QueueSnapshot((job,), False, 0, 12, None))
    assert panel.model.index(0, 3).data() == "first sentences: 12 s"  # the first batch, as it is spoken
    seeded = JobState(1, spec, "running", 0, 12, eta=30.0, started=started, eta_basis="from this voice's earlier renders")
    panel.set_snapshot(QueueSnapshot((seeded,), False, 0, 12, 30.0))
    assert panel.model.index(0, 3).data() == "~30 s" and "earlier renders" in panel.model.index(0, 3).data(3)
    done = JobState(1, spec, "running", 12, 12, eta=0.0, started=started)
    panel.set_snapshot(QueueSnapshot((done,), False, 12, 12, 0.0))
    panel.set_listening(ListeningState(2, 4, 10))
    assert panel.model.index(0, 1).data() == "Proof-listening chapter 3: 40 %" == panel.overall.format()
    assert panel.model.index(0, 3).data() == "listening\u2026"
    panel.set_listening(None)
    assert panel.model.index(0, 1).data() == "running" and "Proof-listening" not in panel.overall.format()


def test_the_preset_tab_follows_the_voice_chosen_before_it_is_saved(qtbot) -> None:  # noqa: ANN001
    from dataclasses import replace

    from support.presets import CPU_ONLY, SETTINGS, machine

    from studio.desktop.facts import VOICE_CANNOT, VoiceChoice
    from studio.ui.voices_dialog import VoicesDialog

    other = VoiceChoice("kokoro:xx_other", "Other", "ja", "ja", 24000, "user", presets=("fp32-cpu",),
                        speaks=("ja", "en"), languages="ja, en", preset_words=("its own model, in its family's words",))
    dlg = VoicesDialog(SETTINGS, ["en"])
    qtbot.addWidget(dlg)
    assert not dlg.default_voice.isEnabled()  # closed until the voices are read (no one-line sliver)
    facts = machine(CPU_ONLY)
    dlg.set_facts(replace(facts, voices=(*facts.voices, other)))
    assert dlg.default_voice.isEnabled()
    runs = lambda: dlg.presets.row_of("int8-cpu").text(2)  # noqa: E731 - the "Runs here" cell
    assert "cannot run" not in runs()  # the project's own voice runs it
    at = dlg.default_voice.findData(other.id)
    assert dlg.default_voice.itemText(at).endswith("speaks ja, en")  # its languages as `studio voices` gives them
    assert "(en voice)" not in dlg.combos["en"].itemText(dlg.combos["en"].findData(other.id))  # it reads English
    dlg.default_voice.setCurrentIndex(at)
    dlg.default_voice.activated.emit(at)  # the producer picks it: the Preset tab is its presets, in its words
    assert runs() == VOICE_CANNOT
    assert dlg.presets.row_of("fp32-cpu").toolTip(0) == "its own model, in its family's words"
