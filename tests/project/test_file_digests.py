"""The model digests behind every cache key are remembered across processes, and a replaced
file is never taken for the old one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from studio.core import files


def _digest_in_new_process(path: Path, cache: Path) -> str:
    code = "import sys; from studio.core.files import sha256_file_cached; print(sha256_file_cached(sys.argv[1]))"
    env = {**os.environ, "STUDIO_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_a_digest_is_kept_for_the_next_process_and_made_anew_for_a_replaced_file(tmp_path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    model = tmp_path / "voice.onnx"
    model.write_bytes(b"a" * 4096)
    first = _digest_in_new_process(model, cache)
    assert first == files.sha256_file(model)
    assert len(list((cache / "digests").iterdir())) == 1  # remembered on disk

    # the same size and modification time, other bytes: the change time tells them apart
    stat = model.stat()
    model.write_bytes(b"b" * 4096)
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert model.stat().st_mtime_ns == stat.st_mtime_ns and model.stat().st_size == stat.st_size
    second = _digest_in_new_process(model, cache)
    assert second == files.sha256_file(model) != first

    # a damaged memo is not believed
    for memo in (cache / "digests").iterdir():
        memo.write_text("not a digest", encoding="ascii")
    monkeypatch.setenv("STUDIO_CACHE_DIR", str(cache))
    files._DIGESTS.clear()
    assert files.sha256_file_cached(model) == second
