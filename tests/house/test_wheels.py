"""Every package of the tested set installs on Windows and Apple-silicon macOS from a wheel
(or is pure Python): read from ``installer/wheels.json``, which ``python installer/wheels.py``
writes from the package index's metadata, so this runs without the network.

The file must describe exactly ``installer/constraints.txt``: a pin added or moved without
refreshing it fails here, and so does an exception that no longer excuses anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.installer import installer_module

REPO = Path(__file__).resolve().parents[2]
REFRESH = "run 'python installer/wheels.py' (it asks PyPI) and commit installer/wheels.json"


pytest.importorskip("packaging")
wheels = installer_module("wheels")
CACHE = json.loads((REPO / "installer" / "wheels.json").read_text(encoding="utf-8"))


def test_the_cache_describes_the_tested_set() -> None:
    listed = {name: entry["version"] for name, entry in CACHE["packages"].items()}
    pinned = wheels.pins()
    assert listed == pinned, (f"{REFRESH}; differs in "
                              f"{sorted(set(listed.items()) ^ set(pinned.items()))}")
    assert CACHE["targets"] == list(wheels.TARGETS) and CACHE["exceptions"] == wheels.EXCEPTIONS, REFRESH


def test_every_package_installs_on_each_supported_system() -> None:
    gaps = {name: g for name, entry in CACHE["packages"].items() if (g := wheels.unmet(name, entry))}
    assert not gaps, f"no wheel and no exception: {gaps}"
    supported = [t for t in wheels.TARGETS if t not in wheels.UNSUPPORTED]
    assert {"win_amd64", "macos_arm64"} <= set(supported)
    for name in ("onnxruntime", "piper-tts", "pyside6-essentials", "sounddevice", "imageio-ffmpeg", "torch"):
        assert all(CACHE["packages"][name][t] for t in supported), name  # a wheel, not a source build


def test_each_exception_still_excuses_a_missing_wheel() -> None:
    for name, targets in wheels.EXCEPTIONS.items():
        assert name in CACHE["packages"], f"{name} is excused but no longer in the tested set"
        assert all(targets.values()), f"{name}: an exception says why"
        entry = CACHE["packages"][name]
        assert any(entry[t] is None for t in targets), f"{name} has a wheel everywhere now: drop its exception"


def test_an_unsupported_system_is_unsupported_for_the_reason_given() -> None:
    for target, (reason, decider) in wheels.UNSUPPORTED.items():
        assert reason and CACHE["packages"][decider][target] is None, (
            f"{decider} has a wheel for {target} now: {target} may be supported; look again")


def test_the_platform_wheels_carry_what_the_studio_needs() -> None:
    """PortAudio inside sounddevice's, ffmpeg inside imageio-ffmpeg's, for each supported system."""
    packages = CACHE["packages"]
    assert "win_amd64" in packages["sounddevice"]["win_amd64"]  # the Windows wheel bundles PortAudio's DLL
    assert "macosx" in packages["sounddevice"]["macos_arm64"]  # and the macOS one its dylib
    assert "win_amd64" in packages["imageio-ffmpeg"]["win_amd64"]
    assert "arm64" in packages["imageio-ffmpeg"]["macos_arm64"]
