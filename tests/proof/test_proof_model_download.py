"""``--asr-model NAME``: the real download code against a local HTTP server serving a model repository.

The served repository is the embedded Whisper base's own files laid out as the
model hub lays them out (the tree listing with sizes and SHA-256, ``resolve/main``),
so the downloaded model is loaded and listens for real; a damaged file is refused.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from support.proof import speak

from studio.core.paths import CACHE_ENV
from studio.proof.check import Checker, ProofItem
from studio.proof.download import DownloadError, fetch_model
from studio.proof.model import choose_model, default_model_dir

REPO = "Studio-Test/faster-whisper-tiny-base"


def _serve_repo(root: Path, *, damage: str = "") -> None:
    """The embedded model as a hub repository under ``root`` (optionally one file's bytes damaged)."""
    source = default_model_dir()
    files = root / REPO / "resolve" / "main"
    files.mkdir(parents=True)
    listing = []
    for name in ("config.json", "tokenizer.json", "vocabulary.txt", "model.bin"):
        shutil.copyfile(source / name, files / name)
        digest = hashlib.sha256((files / name).read_bytes()).hexdigest()
        listing.append({"type": "file", "path": name, "size": (files / name).stat().st_size,
                        **({"lfs": {"oid": digest}} if name == "model.bin" else {})})
    listing.append({"type": "file", "path": "README.md", "size": 3})
    if damage:
        with open(files / damage, "r+b") as fh:
            fh.seek(1000)
            fh.write(b"\0\1\2\3")
    tree = root / "api" / "models" / REPO / "tree"
    tree.mkdir(parents=True)
    (tree / "main").write_text(json.dumps(listing))


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "hub"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("STUDIO_MODEL_HUB", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    yield root
    server.shutdown()


def test_a_named_model_is_downloaded_with_progress_checked_and_listens(hub: Path, tmp_path: Path) -> None:
    default_dir = default_model_dir()  # the embedded one (assembled before the cache moves)
    _serve_repo(hub)
    seen = []
    choice = choose_model(REPO, "cpu", seen.append)
    folder = Path(choice.source)
    assert folder.is_relative_to(tmp_path / "cache")
    assert (folder / "model.bin").read_bytes() == (default_dir / "model.bin").read_bytes()
    assert not (folder / "README.md").exists()
    big = [p for p in seen if p.file == "model.bin"]
    assert len(big) > 10 and big[-1].done == big[-1].total == (folder / "model.bin").stat().st_size
    assert all(a.done < b.done for a, b in zip(big, big[1:]))
    assert (choice.device, choice.compute_type) == ("cpu", "int8")
    checker = Checker.open(REPO, "cpu")  # in the cache now: no second download
    text = "The old sailor lit his pipe and watched the grey sea."
    (record,) = checker.check([ProofItem(np.asarray(speak(text)), 22050, text, "en")])
    assert record.status == "passed", record


def test_a_damaged_download_is_refused_and_nothing_is_left_half_written(hub: Path, tmp_path: Path) -> None:
    _serve_repo(hub, damage="model.bin")
    target = tmp_path / "target"
    with pytest.raises(DownloadError, match="checksum"):
        fetch_model(REPO, target)
    assert not (target / "model.bin").exists() and not (target / ".complete").exists()
    assert not list(target.glob(".*.part"))


def test_an_unknown_name_and_an_unreachable_hub_are_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="unknown speech model"):
        fetch_model("enormous-v9", tmp_path / "x")
    monkeypatch.setenv("STUDIO_MODEL_HUB", "http://127.0.0.1:9")  # the discard port: nothing listens
    with pytest.raises(DownloadError, match="cannot reach"):
        fetch_model("small.en", tmp_path / "y")
