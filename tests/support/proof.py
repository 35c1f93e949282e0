"""Shared by the tests: moved out of test_proof.py so no test module imports another."""

from __future__ import annotations

import json
import wave
from pathlib import Path
import numpy as np
import pytest
from support.gui import write_manuscript
from support.takes import Lent as _Lent
from support.voice import DETERMINISTIC, bundled_engine
from studio.audio.pcm import to_int16
from studio.cli import main
from studio.engine.voice.catalog import get_voice
from studio.rendering.proofing import flagged_rows, proof_project
from studio.rendering.render import render_project
from studio.rendering.synthesizer import SynthRequest, each_synthesizer
from studio.project.opening import new_project_settings, open_for_manuscript
from studio.project.proofs import FLAGGED, NO_AUDIO, NOT_CHECKED, PASSED, UNCHECKED, mark_fine, results
from studio.project.store import Project
from studio.proof.check import Checker, ProofItem
from studio.proof.model import ProofModelError, choose_device


CHANGED = ("The old sailor lit his pipe and watched the grey sea.",
           "The old sailor lit his horse and watched the grey sea.")


DROPPED = ("She opened the heavy wooden door and stepped into the garden.",
           "She opened the heavy door and stepped into the garden.")


#: no sampling noise: the same audio on every run, so a verdict cannot change between runs


def speak(text: str, language: str = "en") -> np.ndarray:
    (audio,) = each_synthesizer(bundled_engine(), DETERMINISTIC)([SynthRequest(0, text, language)])
    assert not isinstance(audio, Exception)
    return np.asarray(audio, np.float32)


def plant(project: Project, text: str, audio: np.ndarray) -> int:
    """Make the sentence saying ``text`` hold ``audio`` instead of what it rendered."""
    row = next(r for r in project.sentences() if r.text == text)
    entry = project.cache.store(row.cache_key, audio, bundled_engine().sample_rate)
    project.mark_done(row.id, entry, synthesized=False)
    return row.id
