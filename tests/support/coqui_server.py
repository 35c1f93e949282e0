"""A local HTTP server with Coqui models zipped as coqui's releases are, and a model list
naming them: the command line's and the desktop's download tests share it."""

from __future__ import annotations

import functools
import http.server
import json
import threading
import zipfile
from pathlib import Path

import pytest


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files with HTTP ranges; the first GET of each file stops halfway (a dropped line)."""

    dropped: set[str] = set()

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start = int(self.headers["Range"].split("=")[1].rstrip("-")) if self.headers.get("Range") else 0
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(data) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if self.path not in self.dropped:
            self.dropped.add(self.path)
            self.wfile.write(data[start: start + (len(data) - start) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data[start:])

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass


@pytest.fixture
def coqui_server(coqui_voices, tmp_path):
    """The test Tacotron 2 and its HiFi-GAN zipped as coqui's releases are, and a model list naming them."""
    served = tmp_path / "served"
    served.mkdir()
    for name, folder in (("tts_models--en--tiny--tacotron2-test", coqui_voices / "tinytaco"),
                         ("vocoder_models--en--tiny--hifigan-test", coqui_voices / "tinytaco" / "vocoder")):
        with zipfile.ZipFile(served / f"{name}.zip", "w") as z:
            for f in ("config.json", "model.pth"):
                z.write(folder / f, f"{name}/{f}")
    _RangeHandler.dropped = set()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_RangeHandler, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    models = {
        "tts_models": {"en": {"tiny": {"tacotron2-test": {
            "github_rls_url": f"{base}/tts_models--en--tiny--tacotron2-test.zip",
            "default_vocoder": "vocoder_models/en/tiny/hifigan-test", "license": "apache 2.0"}}},
            "multilingual": {"tiny": {"xtts-test": {"repo_id": "x/y", "license": "CPML", "tos_required": True}}}},
        "vocoder_models": {"en": {"tiny": {"hifigan-test": {
            "github_rls_url": f"{base}/vocoder_models--en--tiny--hifigan-test.zip", "license": "apache 2.0"}}}},
    }
    (tmp_path / "models.json").write_text(json.dumps(models))
    yield models, tmp_path / "models.json"
    server.shutdown()
    server.server_close()
