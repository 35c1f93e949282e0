"""`studio voices add tts_models/...`: a Coqui model and the vocoder it pairs with, from a local
HTTP server that answers ranges and drops the first connection halfway; the licence said first."""

from __future__ import annotations

import json
import os

import pytest

from studio.core.errors import VoiceError
from studio.engine.coqui.download import download_coqui_voice, model_card
from support.coqui import coqui_voices  # noqa: F401 - a fixture, named as an argument
from support.coqui_server import coqui_server  # noqa: F401 - a fixture, named as an argument
from support.render import studio_cmd


def test_a_dropped_download_resumes_and_brings_the_vocoder(coqui_server, tmp_path):
    models, _ = coqui_server
    dest = tmp_path / "tts"
    with pytest.raises(VoiceError, match="run it again to resume"):
        download_coqui_voice("tts_models/en/tiny/tacotron2-test", dest, models=models, timeout=10)
    assert not (dest / "tts_models--en--tiny--tacotron2-test").exists()  # no half voice listed
    seen: list[tuple[int, int | None]] = []
    for _ in range(3):  # each file drops once: the model, then its vocoder
        try:
            folder = download_coqui_voice("tts_models/en/tiny/tacotron2-test", dest, models=models, timeout=10,
                                          progress=lambda done, total: seen.append((done, total)))
            break
        except VoiceError:
            continue
    assert (folder / "model.pth").is_file() and (folder / "vocoder" / "model.pth").is_file()
    record = json.loads((folder / "download.json").read_text())
    (zipped,) = record["files"].values()
    assert zipped["size"] > 0 and len(zipped["sha256"]) == 64
    assert seen and seen[0][0] > seen[0][1] // 3  # resumed past the half that had arrived


def test_the_licence_is_said_first_and_a_non_commercial_model_needs_agreement(coqui_server, tmp_path):
    models, _ = coqui_server
    card = model_card("tts_models/multilingual/tiny/xtts-test", models)
    assert card.licence_line == ("licence of tts_models/multilingual/tiny/xtts-test: Coqui Public Model License: "
                                 "non-commercial use only (a book read with it cannot be sold)")
    with pytest.raises(VoiceError, match=r"accepting that licence \(--agree\)"):
        download_coqui_voice("tts_models/multilingual/tiny/xtts-test", tmp_path, models=models)
    with pytest.raises(VoiceError, match="unknown Coqui model"):
        model_card("tts_models/en/tiny/nothing", models)


def test_voices_add_then_render_with_the_downloaded_model(coqui_server, tmp_path):
    _, models_file = coqui_server
    env = {**os.environ, "TTS_HOME": str(tmp_path / "home"), "STUDIO_VOICES_DIR": str(tmp_path / "none"),
           "OMP_NUM_THREADS": "1", "XDG_STATE_HOME": str(tmp_path / "state")}
    args = ("voices", "add", "tts_models/en/tiny/tacotron2-test", "--models-file", str(models_file))
    first = studio_cmd(*args, env=env)
    assert first.returncode == 2 and "run it again to resume" in first.stderr
    assert first.stderr.startswith("studio: licence of tts_models/en/tiny/tacotron2-test: apache 2.0")
    again = studio_cmd(*args, env=env)
    if again.returncode != 0:  # the vocoder's first connection drops too
        again = studio_cmd(*args, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("tts_models/en/tiny/tacotron2-test\ten")
    listed = studio_cmd("voices", env=env)
    assert "tts_models/en/tiny/tacotron2-test" in listed.stdout and "vocoder" not in listed.stdout
    book = tmp_path / "book.md"
    book.write_text("# Book\n\nThe river was quiet today.\n", encoding="utf-8")
    made = studio_cmd("render", str(book), "-o", str(tmp_path / "out"), "--voice", "tts_models/en/tiny/tacotron2-test",
                      "--preset", "dynamic-int8", "--format", "wav", env=env, timeout=300)
    assert made.returncode == 0, made.stderr
