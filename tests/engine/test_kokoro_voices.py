"""Kokoro voices the user makes or fetches: a blend saved as a named voice (heard first,
then rendered), a cast of two Kokoro voices, and downloads of packs and models from a
local HTTP server: progress, checked, resumed after a cut."""

from __future__ import annotations

import http.server
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from support.render import studio_cmd

from studio.core.errors import VoiceError
from studio.engine.kokoro import download, mixer
from studio.engine.kokoro.model import offline_model
from studio.engine.kokoro.packs import PACK_SHAPE, load_pack, offline_packs_file
from studio.engine.voice.catalog import get_voice, list_voices

pytestmark = pytest.mark.skipif(offline_packs_file() is None,
                                reason="the offline Kokoro voices are not installed (installer/install.sh)")


@pytest.fixture
def voices_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "voices"
    monkeypatch.setenv("STUDIO_VOICES_DIR", str(folder))
    return folder


def test_a_blend_is_the_weighted_mean_and_is_listed_once_saved(voices_dir):
    mixed = mixer.mix("kokoro:jf_alpha=0.6,jm_kumo=0.4")
    alpha, kumo = (load_pack(offline_packs_file(), n) for n in ("jf_alpha", "jm_kumo"))
    assert mixed.pack.shape == PACK_SHAPE and np.allclose(mixed.pack, 0.6 * alpha + 0.4 * kumo, atol=1e-6)
    assert mixed.language == "ja"
    assert "kokoro:warm" not in [v.id for v in list_voices()]  # nothing saved by mixing
    info = mixer.save("warm", mixed)
    assert (info.id, info.source, info.family) == ("kokoro:warm", "user", "kokoro")
    assert "blend of jf_alpha 0.6 + jm_kumo 0.4" in info.name
    assert np.allclose(load_pack(info.model_path, "warm"), mixed.pack)


def test_blend_recipes_that_cannot_mix_say_why_in_one_line(voices_dir):
    with pytest.raises(VoiceError, match="VOICE=WEIGHT"):
        mixer.mix("kokoro:jf_alpha=0.6,kokoro:jm_kumo")
    with pytest.raises(VoiceError, match="kokoro:af_nobody is not an installed Kokoro voice"):
        mixer.mix("kokoro:af_nobody=1")
    with pytest.raises(VoiceError, match="already a voice pack"):
        mixer.save("jm_kumo", mixer.mix("kokoro:jf_alpha=1"))


@pytest.mark.slow
def test_studio_voices_blend_samples_then_saves_and_the_blend_renders(voices_dir, tmp_path):
    env = {"STUDIO_VOICES_DIR": str(voices_dir)}
    heard = studio_cmd("voices", "blend", "warm", "kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4",
                       "--sample", str(tmp_path / "warm.wav"), env=_env(env), timeout=600)
    assert heard.returncode == 0, heard.stderr
    assert (tmp_path / "warm.wav").stat().st_size > 24000 and not (voices_dir / "kokoro").exists()
    saved = studio_cmd("voices", "blend", "warm", "kokoro:jf_alpha=0.6,kokoro:jm_kumo=0.4", "--save", env=_env(env))
    assert saved.returncode == 0 and saved.stdout.startswith("kokoro:warm\t"), saved.stderr
    book = tmp_path / "book.md"
    book.write_text("# One\n\nThe lighthouse keeper climbed the stairs at dusk.\n", encoding="utf-8")
    done = studio_cmd("render", str(book), "-o", str(tmp_path / "out"), "--voice", "kokoro:warm", "--format", "wav",
                      env=_env(env), timeout=900)
    assert done.returncode == 0, done.stderr
    assert "2 synthesized" in done.stdout and "0 failed" in done.stdout and len(list((tmp_path / "out").glob("*.wav"))) == 1


@pytest.mark.slow
def test_a_cast_of_two_kokoro_voices_speaks_each_in_its_own(voices_dir, tmp_path):
    book = tmp_path / "tale.md"
    book.write_text('# Tale\n\n"Come here at once," said Anna.\n\n"I am coming," said Tom.\n', encoding="utf-8")
    env = _env({"STUDIO_VOICES_DIR": str(voices_dir)})
    out, project = tmp_path / "out", tmp_path / "out" / "tale.studio"
    first = studio_cmd("render", str(book), "-o", str(out), "--voice", "kokoro:jm_kumo", "--format", "wav", env=env,
                       timeout=900)
    assert first.returncode == 0, first.stderr
    cast = studio_cmd("cast", str(project), "--set", "Anna=kokoro:jf_alpha", "--set", "Tom=kokoro:jf_nezumi", "--on",
                      env=env)
    assert cast.returncode == 0, cast.stderr
    again = studio_cmd("render", str(project), "-o", str(out), "--cast", "--format", "wav", env=env, timeout=900)
    assert again.returncode == 0, again.stderr
    assert "0 failed" in again.stdout
    listing = studio_cmd("cast", str(project), "--json", env=env)
    assert "kokoro:jf_alpha" in listing.stdout and "kokoro:jf_nezumi" in listing.stdout


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    return {**os.environ, **extra}


# ------------------------------------------------------------------ downloads


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files with ``Range`` support; ``cut`` drops the first response after that many bytes."""

    cut: list[int] = []
    ranges: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = Path(self.directory) / self.path.lstrip("/")
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start = 0
        asked = self.headers.get("Range")
        self.ranges.append(asked or "")
        if asked:
            start = int(asked.removeprefix("bytes=").split("-")[0])
            if start >= len(data):
                self.send_error(416)
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        body = data[start:]
        if self.cut:
            body = body[: self.cut.pop()]
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def pack_server(tmp_path):
    root = tmp_path / "served"
    (root / "voices").mkdir(parents=True)
    handler = type("Handler", (_RangeHandler,), {"cut": [], "ranges": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: handler(*a, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root, handler
    server.shutdown()
    server.server_close()


def test_a_pack_download_is_resumed_after_a_cut_and_checked(pack_server, voices_dir):
    torch = pytest.importorskip("torch")
    url, root, handler = pack_server
    pack = load_pack(offline_packs_file(), "jf_tebukuro")
    torch.save(torch.from_numpy(pack.copy()), root / "voices" / "af_test.pt")
    size = (root / "voices" / "af_test.pt").stat().st_size
    handler.cut.append(size // 3)
    seen: list[tuple[int, int | None]] = []
    with pytest.raises(VoiceError, match="run it again to resume"):
        download.download("kokoro:af_test", voices_dir, packs_url=url, progress=lambda d, t: seen.append((d, t)))
    assert (voices_dir / "kokoro" / "af_test.pt.part").stat().st_size == size // 3
    assert not (voices_dir / "kokoro" / "af_test.pt").exists()
    path = download.download("kokoro:af_test", voices_dir, packs_url=url, progress=lambda d, t: seen.append((d, t)))
    assert handler.ranges == ["", f"bytes={size // 3}-"]  # the second request asked only for the rest
    assert seen[-1] == (size, size) and path.name == "af_test.pt"
    assert np.array_equal(load_pack(path, "af_test"), pack)
    voice = get_voice("kokoro:af_test")
    assert voice.language == "en_US" and voice.abilities.languages == ("en",)


def test_a_download_that_is_not_a_pack_is_deleted_with_one_line(pack_server, voices_dir):
    url, root, _ = pack_server
    (root / "voices" / "af_bad.pt").write_bytes(b"<html>rate limited</html>")
    with pytest.raises(VoiceError, match="af_bad.pt is not usable, deleted"):
        download.download("kokoro:af_bad", voices_dir, packs_url=url)
    assert list((voices_dir / "kokoro").iterdir()) == []
    with pytest.raises(VoiceError, match="HTTP 404"):
        download.download("kokoro:af_missing", voices_dir, packs_url=url)


def test_the_int8_model_download_is_checked_against_the_offline_checksum(pack_server, voices_dir):
    url, root, _ = pack_server
    shutil.copy(offline_model(), root / "kokoro-v1.0.int8.onnx")
    path = download.download("kokoro:model-int8", voices_dir, models_url=url)
    assert path == voices_dir / "kokoro" / "kokoro-v1.0.int8.onnx" and path.stat().st_size == 92_361_271
    assert "your kokoro-v1.0.int8.onnx" in __import__("studio.engine.kokoro.model", fromlist=["x"]).model_for(
        "int8", voices_dir / "kokoro").what
    shutil.copy(offline_packs_file(), root / "kokoro-v1.0.onnx")  # a zip served under the FP32 model's name
    with pytest.raises(VoiceError, match="not usable, deleted: not an ONNX model"):
        download.download("kokoro:model-fp32", voices_dir, models_url=url)
    with pytest.raises(VoiceError, match="model-fp32, model-fp16 or model-int8"):
        download.download("kokoro:model-bf16", voices_dir, models_url=url)


@pytest.mark.slow
def test_a_kokoro_render_is_proof_listened_and_exported_with_the_model_in_the_credits(voices_dir, tmp_path):
    book = tmp_path / "keeper.md"
    book.write_text("# The Keeper\n\nThe lighthouse keeper climbed the stairs every evening at dusk. "
                    "He carried a small lamp and a book of old sea stories.\n", encoding="utf-8")
    env = _env({"STUDIO_VOICES_DIR": str(voices_dir)})
    out = tmp_path / "out"
    done = studio_cmd("render", str(book), "-o", str(out), "--voice", "kokoro:jm_kumo", "--format", "wav", "--proof",
                      env=env, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr  # exit 3 would mean a sentence was flagged
    exported = studio_cmd("export", str(out / "keeper.studio"), "-o", str(tmp_path / "book"), "--format", "m4b",
                          env=env, timeout=900)
    assert exported.returncode == 0, exported.stderr
    m4b = next((tmp_path / "book").rglob("*.m4b"))
    from mutagen.mp4 import MP4

    tags = MP4(m4b).tags
    assert any("Kokoro Kumo" in str(v) for v in tags.values()), dict(tags)


def test_a_kokoro_pack_reads_an_english_book_in_english_as_narrator_and_in_the_cast():
    from studio.project.unvoiced import said, voice_language

    assert voice_language("kokoro:jf_alpha") == "ja,en"  # its own language first, and English
    assert voice_language("en_US-joe-medium") == "en"  # a Piper voice speaks its own only
    assert voice_language("kokoro:nobody") is None
    # as the book's voice: an English passage is said in English, a French one is no language of its
    assert said("skip", [], "en", voice_language("kokoro:jf_alpha"), "en") == "en"
    assert said("skip", [], "en", voice_language("kokoro:jf_alpha"), "fr") == "skip/fr"
