"""Voice discovery and downloads, with real files and a real local HTTP server."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import logging
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from studio.core.errors import VoiceError
from studio.engine.coqui.download import download_coqui_voice
from studio.engine.voice.download import download_piper_voice
from studio.engine.piper.voices import DEFAULT_VOICE_ID
from studio.engine.voice.catalog import get_voice, list_voices
from support.voices import TEST_VOICE, _index, voice_server  # noqa: F401 - voice_server: a fixture, named as an argument


@pytest.fixture
def empty_coqui(tmp_path) -> Path:
    """An empty coqui model cache, so the machine's own cache does not leak in."""
    path = tmp_path / "coqui-cache"
    path.mkdir()
    return path


def _install_piper(folder: Path, voice_id: str, language: str | None = None, config_text: str | None = None) -> Path:
    bundled = get_voice(None)
    folder.mkdir(parents=True, exist_ok=True)
    model = folder / f"{voice_id}.onnx"
    model.symlink_to(bundled.model_path)
    if config_text is None:
        config = json.loads(bundled.config_path.read_text())
        if language:
            config["language"]["code"] = language
        config_text = json.dumps(config)
    (folder / f"{voice_id}.onnx.json").write_text(config_text)
    return model


def _install_coqui(folder: Path, sample_rate: int = 22050, model_name: str = "model_file.pth") -> None:
    folder.mkdir(parents=True)
    config = {"model": "vits", "audio": {"sample_rate": sample_rate}, "phoneme_language": "en-us"}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / model_name).write_bytes(b"\x80\x02 not a real checkpoint")


# ------------------------------------------------------------------ listing


def test_bundled_voice_comes_first(tmp_path, empty_coqui):
    voices = list_voices(tmp_path / "nothing-here", hub_dir=empty_coqui)
    assert voices[0].id == DEFAULT_VOICE_ID
    default = voices[0]
    assert (default.family, default.source, default.sample_rate) == ("piper", "bundled", 22050)
    assert default.language == "en_US" and default.language_family == "en"
    assert default.model_path.is_file() and default.config_path.is_file()
    assert get_voice(None) == default
    can = default.abilities
    assert can.languages == ("en",) and can.speakers == () and "fp32-cpu" in can.presets
    assert can.phoneme_input and can.batching and can.triton and can.piper_cli


def test_user_piper_and_coqui_voices(tmp_path, empty_coqui):
    user = tmp_path / "voices"
    _install_piper(user, "fr_FR-joe-medium", language="fr_FR")
    _install_piper(user / "more", "de_DE-joe-low", language="de_DE")
    _install_coqui(user / "my-vits")
    _install_coqui(empty_coqui / "tts_models--en--ljspeech--vits")
    ids = [v.id for v in list_voices(user, hub_dir=empty_coqui) if v.family != "kokoro"]  # tests/engine/test_kokoro.py
    assert ids == [DEFAULT_VOICE_ID, "de_DE-joe-low", "fr_FR-joe-medium", "my-vits", "tts_models/en/ljspeech/vits"]

    fr = get_voice("fr_FR-joe-medium", user, hub_dir=empty_coqui)
    assert (fr.family, fr.source, fr.language_family) == ("piper", "user", "fr")
    mine = get_voice("my-vits", user, hub_dir=empty_coqui)
    assert (mine.family, mine.source, mine.language) == ("coqui", "user", "en_US")
    assert mine.model_path.name == "model_file.pth"
    hub = get_voice("tts_models/en/ljspeech/vits", user, hub_dir=empty_coqui)
    assert (hub.family, hub.source, hub.language_family) == ("coqui", "coqui-hub", "en")
    assert hub.abilities.languages == ("en",)


def test_a_preset_the_voice_cannot_run_is_refused_with_its_presets(tmp_path, empty_coqui):
    from studio.core.errors import PresetUnavailable
    from studio.engine.presets import open_preset

    _install_coqui(tmp_path / "voices" / "my-vits")
    voice = get_voice("my-vits", tmp_path / "voices", hub_dir=empty_coqui)
    with pytest.raises(PresetUnavailable, match=rf"{voice.id} cannot run preset fp32-cpu \(its presets: "):
        open_preset("fp32-cpu", voice)


def test_broken_voices_are_skipped_with_a_warning(tmp_path, empty_coqui, caplog):
    user = tmp_path / "voices"
    _install_piper(user, "en_US-good-medium")
    _install_piper(user, "en_US-badjson-medium", config_text="{ nope")
    _install_piper(user, "en_US-norate-medium", config_text=json.dumps({"espeak": {"voice": "en-us"}}))
    (user / "en_US-noconfig-medium.onnx").write_bytes(b"x")
    (user / "en_US-empty-medium.onnx").write_bytes(b"")
    (user / "en_US-empty-medium.onnx.json").write_text(get_voice(None).config_path.read_text())
    _install_piper(user, DEFAULT_VOICE_ID)  # duplicate id of the bundled voice
    broken_coqui = user / "broken-coqui"
    _install_coqui(broken_coqui)
    (broken_coqui / "config.json").write_text("[]")
    with caplog.at_level(logging.WARNING, logger="studio.engine.voice.catalog"):
        voices = list_voices(user, hub_dir=empty_coqui)
    assert [v.id for v in voices if v.family != "kokoro"] == [DEFAULT_VOICE_ID, "en_US-good-medium"]
    assert voices[0].source == "bundled"
    text = caplog.text
    for name in ("badjson", "norate", "noconfig", "empty", "already taken", "broken-coqui"):
        assert name in text


def test_unknown_voice_lists_the_choices(tmp_path, empty_coqui):
    _install_piper(tmp_path, "en_US-other-medium")
    with pytest.raises(VoiceError, match=r"unknown voice 'nope'.*en_US-joe-medium, en_US-other-medium"):
        get_voice("nope", tmp_path, hub_dir=empty_coqui)


def test_voices_dir_from_environment(tmp_path, empty_coqui, monkeypatch):
    _install_piper(tmp_path / "env", "en_US-env-medium")
    monkeypatch.setenv("STUDIO_VOICES_DIR", str(tmp_path / "env"))
    assert "en_US-env-medium" in [v.id for v in list_voices(hub_dir=empty_coqui)]


# ------------------------------------------------------------------ piper download


def test_download_piper_voice_lands_in_list(voice_server, tmp_path, empty_coqui):
    base_url, model, config = voice_server
    dest = tmp_path / "voices"
    seen: list[int] = []
    info = download_piper_voice(
        TEST_VOICE, dest, base_url=base_url, timeout=10,
        index=_index(model, config), progress=lambda done, total: seen.append(done),
    )
    assert info.id == TEST_VOICE and info.source == "user"
    assert (dest / f"{TEST_VOICE}.onnx").stat().st_size == model.stat().st_size
    assert seen and seen[-1] == config.stat().st_size
    assert TEST_VOICE in [v.id for v in list_voices(dest, hub_dir=empty_coqui)]
    assert not list(dest.glob(".download-*"))
    # a second call finds it and does not download again
    mtime = (dest / f"{TEST_VOICE}.onnx").stat().st_mtime_ns
    download_piper_voice(TEST_VOICE, dest, base_url=base_url, timeout=10)
    assert (dest / f"{TEST_VOICE}.onnx").stat().st_mtime_ns == mtime


def test_download_rejects_corrupt_files(voice_server, tmp_path):
    base_url, model, config = voice_server
    dest = tmp_path / "voices"
    with pytest.raises(VoiceError, match="corrupt"):
        download_piper_voice(
            TEST_VOICE, dest, base_url=base_url, timeout=10, index=_index(model, config, md5_model="0" * 32)
        )
    assert list(dest.iterdir()) == []  # no partial or temp files


def test_download_errors_are_one_line(voice_server, tmp_path):
    base_url, _, _ = voice_server
    with pytest.raises(VoiceError, match="HTTP 404"):
        download_piper_voice("en_GB-nobody-low", tmp_path, base_url=base_url, timeout=10)
    with pytest.raises(VoiceError, match="invalid Piper voice name"):
        download_piper_voice("../../etc/passwd", tmp_path, base_url=base_url)


def test_unreachable_server_fails_fast(tmp_path):
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(VoiceError, match=r"cannot reach 127\.0\.0\.1:\d+: offline\?") as err:
        download_piper_voice(TEST_VOICE, tmp_path / "v", base_url=f"http://127.0.0.1:{port}", timeout=5)
    assert time.monotonic() - start < 5
    assert "\n" not in str(err.value)
    assert not list((tmp_path / "v").iterdir())


# ------------------------------------------------------------------ coqui download


def test_coqui_download_offline_is_a_clear_error(tmp_path):
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    models = {"tts_models": {"en": {"ljspeech": {"vits": {
        "github_rls_url": f"http://127.0.0.1:{port}/tts_models--en--ljspeech--vits.zip", "license": "apache 2.0"}}}}}
    start = time.monotonic()
    with pytest.raises(VoiceError, match=r"cannot reach 127\.0\.0\.1:\d+: offline\?.*run it again to resume"):
        download_coqui_voice("tts_models/en/ljspeech/vits", tmp_path, models=models, timeout=5)
    assert time.monotonic() - start < 20
    assert not (tmp_path / "tts_models--en--ljspeech--vits").exists()
    with pytest.raises(VoiceError, match="unknown Coqui model"):
        download_coqui_voice("tts_models/xx/nobody/vits", tmp_path, models=models)


def test_cli_voices_add_verifies_and_installs(voice_server, tmp_path, empty_coqui):
    """`studio voices add NAME`: the index is fetched, the files verified, the voice listed."""
    from support.render import studio_cmd

    base_url, model, config = voice_server
    (model.parents[4] / "voices.json").write_text(json.dumps(_index(model, config)), encoding="utf-8")
    env = {**os.environ, "STUDIO_VOICES_DIR": str(tmp_path / "voices")}
    done = studio_cmd("voices", "add", TEST_VOICE, "--base-url", base_url, env=env)
    assert done.returncode == 0, done.stderr
    assert TEST_VOICE in done.stdout and (tmp_path / "voices" / f"{TEST_VOICE}.onnx").is_file()
    listed = studio_cmd("voices", env=env)
    assert TEST_VOICE in listed.stdout

    # a checksum that does not match the served file: refused, nothing installed
    (model.parents[4] / "voices.json").write_text(json.dumps(_index(model, config, md5_model="0" * 32)))
    env["STUDIO_VOICES_DIR"] = str(tmp_path / "other")
    bad = studio_cmd("voices", "add", TEST_VOICE, "--base-url", base_url, env=env)
    assert bad.returncode == 2 and "corrupt (md5 mismatch)" in bad.stderr
    assert not list((tmp_path / "other").glob("*.onnx"))


def test_cli_voices_add_offline_is_one_line(tmp_path):
    from support.render import studio_cmd

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "STUDIO_VOICES_DIR": str(tmp_path / "voices")}
    done = studio_cmd("voices", "add", "en_US-lessac-medium", "--base-url", f"http://127.0.0.1:{port}",
                      "--timeout", "5", env=env)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and done.stderr.startswith("studio: error: cannot reach 127.0.0.1")
