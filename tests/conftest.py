"""The suite's entry: the support package on the path; its fixtures and its cost report as plugins."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # the support package
sys.path.insert(1, str(TESTS.parent / "bench"))  # bench/tacotron.py, shared by a benchmark and its tests

pytest_plugins = ["support.fixtures", "support.cost"]
