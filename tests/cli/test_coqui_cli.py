"""Coqui checkpoints on the command line: listed, rendered with `studio render --voice ID`,
cast as character voices, and refused with one line when they cannot run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.cast import CHAPTER
from support.coqui import coqui_env, coqui_voices  # noqa: F401 - fixtures, named as arguments
from support.render import ffprobe_duration, studio_cmd

BOOK = "# A Short Book\n\n## One\n\nThe river was quiet today. The garden was green and still.\n"


def _error_line(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("studio: error: ")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def test_voices_lists_each_coqui_voice_with_languages_speakers_and_presets(coqui_env):
    proc = studio_cmd("voices", env=coqui_env)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:]}
    assert rows["tinyyourtts"].split()[1:4] == ["en,", "fr", "2"]
    assert "fp32-torch, dynamic-int8, fp16-cuda" in rows["tinytaco"]
    assert rows["tinyvits-cast"].split()[1:3] == ["en", "3"]
    assert "vocoder" not in rows


@pytest.mark.parametrize(("voice_id", "preset"), [("tinytaco", "dynamic-int8"), ("tinyglow", None),
                                                  ("tinyvits", "fp32-torch"), ("tinyyourtts", None)])
def test_render_speaks_a_book_with_a_coqui_voice(coqui_env, tmp_path, voice_id, preset):
    book = tmp_path / "book.md"
    book.write_text(BOOK, encoding="utf-8")
    args = ["render", str(book), "-o", str(tmp_path / "out"), "--voice", voice_id, "--format", "wav"]
    proc = studio_cmd(*args, *(["--preset", preset] if preset else []), env=coqui_env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"preset {preset or 'fp32-torch'}:" in proc.stderr  # no preset: the voice's own first one
    files = sorted((tmp_path / "out").glob("*.wav"))
    assert len(files) == 1 and ffprobe_duration(files[0]) > 0.5
    assert "3 synthesized" in proc.stdout and "0 failed" in proc.stdout


def test_a_preset_the_voice_cannot_run_is_refused_before_the_render(coqui_env, tmp_path):
    book = tmp_path / "book.md"
    book.write_text(BOOK, encoding="utf-8")
    proc = studio_cmd("render", str(book), "-o", str(tmp_path / "out"), "--voice", "tinyvits", "--preset",
                      "fp32-cpu", env=coqui_env)
    assert "voice tinyvits cannot run preset fp32-cpu (its presets: fp32-torch, fp16-cuda)" in _error_line(proc)
    assert not list(tmp_path.rglob("*.mp3"))


def test_a_broken_coqui_voice_is_one_line_and_the_others_still_list(coqui_env, coqui_voices, tmp_path):
    user = tmp_path / "voices"
    shutil.copytree(coqui_voices / "tinyvits", user / "tinyvits")
    shutil.copytree(coqui_voices / "tinyglow", user / "broken")
    config = json.loads((user / "broken" / "config.json").read_text())
    (user / "broken" / "config.json").write_text(json.dumps({**config, "model": "wavenet_tts"}))
    env = {**coqui_env, "STUDIO_VOICES_DIR": str(user)}
    listed = studio_cmd("voices", env=env)
    assert listed.returncode == 0 and "tinyvits" in listed.stdout and "broken" not in listed.stdout
    assert "names model 'wavenet_tts', which coqui-tts does not know" in listed.stderr
    book = tmp_path / "book.md"
    book.write_text(BOOK, encoding="utf-8")
    proc = studio_cmd("render", str(book), "-o", str(tmp_path / "out"), "--voice", "broken", env=env)
    assert "unknown voice 'broken'" in _error_line(proc)
    assert "wavenet_tts" in proc.stderr  # the reason it is not listed, said once above


def test_a_multi_speaker_models_speakers_are_cast_voices(coqui_env, tmp_path):
    book = tmp_path / "harbour.md"
    book.write_text(CHAPTER, encoding="utf-8")
    project = tmp_path / "harbour.studio"
    made = studio_cmd("render", str(book), "--project", str(project), "-o", str(tmp_path / "out"), "--voice",
                      "tinyvits-cast", "--chapters", "1", "--format", "wav", env=coqui_env, timeout=300)
    assert made.returncode == 0, made.stderr
    wrong = studio_cmd("cast", str(project), "--set", "Mary=tinyvits-cast:7", env=coqui_env)
    assert "tinyvits-cast has 3 speaker(s) (0-2); there is no speaker 7" in _error_line(wrong)
    cast = studio_cmd("cast", str(project), "--set", "Mary=tinyvits-cast:1", "--set", "Tom=tinyvits-cast:2", "--on",
                      env=coqui_env)
    assert cast.returncode == 0, cast.stderr
    again = studio_cmd("render", str(project), "-o", str(tmp_path / "cast"), "--format", "wav", env=coqui_env,
                       timeout=300)
    assert again.returncode == 0, again.stderr
    assert "0 failed" in again.stdout and " 0 synthesized" not in again.stdout  # the characters' lines anew


def test_a_book_rendered_with_a_coqui_voice_is_proof_listened_and_exported(coqui_env, tmp_path):
    book = tmp_path / "book.md"
    book.write_text(BOOK, encoding="utf-8")
    project = tmp_path / "book.studio"
    made = studio_cmd("render", str(book), "--project", str(project), "-o", str(tmp_path / "out"), "--voice",
                      "tinyglow", "--format", "mp3", env=coqui_env, timeout=300)
    assert made.returncode == 0, made.stderr
    assert ffprobe_duration(next((tmp_path / "out").glob("*.mp3"))) > 0.5  # exported
    proof = studio_cmd("proof", str(project), "--json", "--retry", "0", "--device", "cpu", env=coqui_env, timeout=600)
    assert proof.returncode in (0, 3), proof.stderr  # 3: some need a human ear (random weights mumble)
    rows = json.loads(proof.stdout)
    assert all({"text", "heard", "reasons"} <= set(r) for r in rows)  # every verdict has what was heard
