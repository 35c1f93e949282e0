"""Repeatable renders: a sentence's sampling noise is seeded by what it is.

The same text, voice and settings give the same audio (noise on, as a producer
renders); a new take draws other noise and records its draw; a render killed
mid-way and resumed equals a clean render of the same book, sentence by sentence.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from studio.audio.pcm import read_wav_bytes
from studio.engine.base import SynthesisSettings
from studio.engine.noise import sentence_seed, standard_normal
from support.render import REPO, studio_cmd

VOICED = SynthesisSettings()  # the voice's noise on: 0.667 / 0.8


def test_noise_is_a_function_of_the_sentence_and_its_take() -> None:
    ids = [1, 20, 30, 40, 2]
    seed = sentence_seed(ids, VOICED)
    assert seed == sentence_seed(list(ids), SynthesisSettings())
    assert seed != sentence_seed(ids, replace(VOICED, take=1))
    assert seed != sentence_seed(ids[:-1], VOICED)
    assert seed != sentence_seed(ids, replace(VOICED, noise_w=0.5))
    assert seed == sentence_seed(ids, replace(VOICED, length_scale=1.1))  # sped up, the same reading
    long, short = standard_normal(seed, 1, 192, 300), standard_normal(seed, 1, 192, 120)
    assert np.array_equal(long[:, :120], short), "a draw's first frames must not depend on its length"
    assert abs(float(long.std()) - 1.0) < 0.02 and abs(float(long.mean())) < 0.02


def test_the_same_sentence_sounds_the_same_and_a_new_take_differs(onnx_engine) -> None:
    ids = onnx_engine.text_to_ids("The lighthouse keeper wound the old clock before the storm.", "en")
    first = onnx_engine.synthesize_batch([ids], VOICED)[0]
    again = onnx_engine.synthesize_batch([ids], VOICED)[0]
    assert np.array_equal(first, again)
    other = onnx_engine.synthesize_batch([ids], replace(VOICED, take=1))[0]
    n = min(first.size, other.size)
    assert first.size != other.size or not np.allclose(first[:n], other[:n], atol=1e-3)
    # in a batch with another sentence it draws the same noise as alone
    ids2 = onnx_engine.text_to_ids("A short one.", "en")
    in_batch = onnx_engine.synthesize_batch([ids2, ids], VOICED)[1]
    assert np.array_equal(first, in_batch)


def _write_book(path: Path, sentences: int) -> Path:
    words = ("amber", "brook", "cedar", "dune", "ember", "fjord", "grove", "heath", "inlet", "juniper")
    lines = ["# The Repeatable Book", "", "## Part One", ""]
    for i in range(sentences):
        a, b = words[i % len(words)], words[(i * 3 + 1) % len(words)]
        lines.append(f"Sentence {i + 1} walks past the {a} and the {b}, then rests a while.")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _cached_audio(project: Path) -> dict[int, tuple[str, bytes]]:
    """Sentence ord -> (cache key, PCM bytes) of every rendered sentence."""
    conn = sqlite3.connect(project / "project.sqlite")
    try:
        rows = conn.execute("SELECT ord, cache_key FROM sentences WHERE state = 'done' ORDER BY ord").fetchall()
    finally:
        conn.close()
    out = {}
    for ord_, key in rows:
        audio, _rate = read_wav_bytes((project / "cache" / key[:2] / f"{key}.wav").read_bytes())
        out[ord_] = (key, audio.tobytes())
    return out


def _done(db: Path) -> int:
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("SELECT count(*) FROM sentences WHERE state = 'done'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_a_killed_and_resumed_render_equals_a_clean_render(tmp_path: Path) -> None:
    book = _write_book(tmp_path / "book.md", sentences=16)
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    args = [sys.executable, "-m", "studio", "render", str(book), "--format", "wav", "-o"]
    with open(tmp_path / "killed.log", "wb") as log:
        proc = subprocess.Popen([*args, str(killed)], cwd=REPO, stdout=log, stderr=log)
    db = killed / "book.studio" / "project.sqlite"
    try:
        deadline = time.monotonic() + 300
        while _done(db) < 5 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    part = _cached_audio(killed / "book.studio")
    assert 5 <= len(part) < 17, "the kill should land mid-render"
    resumed = studio_cmd("render", str(book), "--format", "wav", "-o", str(killed), timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    fresh = studio_cmd("render", str(book), "--format", "wav", "-o", str(clean), timeout=300)
    assert fresh.returncode == 0, fresh.stderr

    got, want = _cached_audio(killed / "book.studio"), _cached_audio(clean / "book.studio")
    assert sorted(got) == sorted(want) and len(want) >= 17  # the part's title and 16 sentences
    for ord_ in want:
        assert got[ord_][0] == want[ord_][0], f"sentence {ord_}: another cache key"
        assert got[ord_][1] == want[ord_][1], f"sentence {ord_}: other audio after the resume"
    files = sorted(f.name for f in clean.glob("*.wav"))
    assert files and files == sorted(f.name for f in killed.glob("*.wav"))
    for name in files:
        assert (killed / name).read_bytes() == (clean / name).read_bytes(), name
