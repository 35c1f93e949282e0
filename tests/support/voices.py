"""Shared by the tests: moved out of test_voices.py so no test module imports another."""

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
from studio.engine.voice.download import download_piper_voice
from studio.engine.piper.voices import DEFAULT_VOICE_ID
from studio.engine.voice.catalog import get_voice, list_voices


TEST_VOICE = "en_GB-testjoe-medium"  # served copy of the bundled voice under another name


@pytest.fixture
def voice_server(tmp_path):
    """A piper-voices-like tree served on 127.0.0.1; yields (base_url, served model, config)."""
    root = tmp_path / "served"
    folder = root / "en" / "en_GB" / "testjoe" / "medium"
    folder.mkdir(parents=True)
    bundled = get_voice(None)
    model = folder / f"{TEST_VOICE}.onnx"
    config = folder / f"{TEST_VOICE}.onnx.json"
    model.symlink_to(bundled.model_path)
    shutil.copy(bundled.config_path, config)
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", model, config
    server.shutdown()
    server.server_close()


def _index(model: Path, config: Path, md5_model: str | None = None) -> dict:
    rel = f"en/en_GB/testjoe/medium/{TEST_VOICE}"
    model_bytes = model.read_bytes()
    return {
        TEST_VOICE: {
            "files": {
                f"{rel}.onnx": {
                    "size_bytes": len(model_bytes),
                    "md5_digest": md5_model or hashlib.md5(model_bytes).hexdigest(),
                },
                f"{rel}.onnx.json": {
                    "size_bytes": config.stat().st_size,
                    "sha256_digest": hashlib.sha256(config.read_bytes()).hexdigest(),
                },
            }
        }
    }


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass
