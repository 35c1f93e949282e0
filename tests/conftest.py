"""The suite's entry: the support package on the path; its fixtures and its cost report as plugins."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# presets measured on this machine (`studio voices measure`) must not change what the tests expect as
# a voice's default: the tests (and the commands they start) keep their trials in a folder of their own
os.environ["STUDIO_PRESET_TRIALS"] = tempfile.mkdtemp(prefix="studio-test-preset-trials-")

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # the support package
sys.path.insert(1, str(TESTS.parent / "bench"))  # bench/tacotron.py, shared by a benchmark and its tests

pytest_plugins = ["support.fixtures", "support.cost"]
