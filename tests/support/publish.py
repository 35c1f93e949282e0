"""Shared by the tests: moved out of test_publish.py so no test module imports another."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
import numpy as np
import pytest
from studio.audio.acx import AcxRules
from studio.audio.measure import read_audio, window_rms
from studio.audio.subtitles import parse_cues
from studio.core.errors import ProjectError
from studio.engine.voice.catalog import get_voice
from studio.delivery.credits import default_narrator
from studio.delivery.publish import PublishOptions, book_meta, publish
from studio.rendering.render import render_project
from studio.project.opening import new_project_settings
from studio.project.store import Project
from support.audio import agree_with_ffmpeg
from support.render import make_book, real_engine, studio_cmd


TOLERANCE = 0.05  # s: chapter marks and cues against the audio


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory):
    """The two-chapter test book, rendered once for the module."""
    proj = Project.create(tmp_path_factory.mktemp("pub") / "p", make_book(), new_project_settings(get_voice(None)))
    render_project(proj, real_engine())
    yield proj
    proj.close()


def publisher(project: Project, root: Path, **options: object):
    """key ("m4b", "mp3", "mp3-single", ...) -> PublishResult, each made once, with ``options``."""
    made = {}

    def get(key: str):
        if key not in made:
            opts = PublishOptions(fmt=key.split("-")[0], single_file=key.endswith("-single"), year="2025",
                                  **options)  # type: ignore[arg-type]
            made[key] = publish(project, root / key, opts, engine=real_engine())
        return made[key]

    return get


def ffprobe_json(path: Path, *entries: str) -> dict:
    out = subprocess.run(["ffprobe", "-v", "error", *entries, "-of", "json", str(path)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def speech_segments(audio: np.ndarray, rate: int, threshold_db: float = -50.0, gap_s: float = 0.25) -> list[tuple[float, float]]:
    """Spans of sound in decoded audio: 5 ms windows over ``threshold_db``, runs of
    quiet shorter than ``gap_s`` bridged (the gaps inside a word are not pauses)."""
    size = int(0.005 * rate)
    loud = np.flatnonzero(window_rms(audio, size) > 10 ** (threshold_db / 20))
    segments: list[list[float]] = []
    for i in loud:
        t = i * size / rate
        if segments and t - segments[-1][1] < gap_s:
            segments[-1][1] = t + size / rate
        else:
            segments.append([t, t + size / rate])
    return [(a, b) for a, b in segments]


def first_sound_after(audio: np.ndarray, rate: int, t: float) -> float:
    return next(a for a, _ in speech_segments(audio, rate) if a >= t)
