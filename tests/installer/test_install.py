"""The installer's plan on each system, and the launchers it writes, run for real here.

What only Windows or macOS can show (the Start-menu shortcut being made, the .app
opening in Finder) is not run here; the plan for each system is (``--dry-run
--system``), the macOS app's launcher script is started, and Linux's install runs
in CI through ``installer/run-tests.sh``.
"""

from __future__ import annotations

import os
import plistlib
import subprocess
import sys
from pathlib import Path

import pytest

from support.installer import installer_module

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "installer" / "install.py"


install = installer_module("install")


def plan_for(system: str, *options: str, venv: Path = Path("/tmp/venv")) -> str:
    env = {**os.environ, "STUDIO_VENV": str(venv)}
    env.pop("STUDIO_UNLOCKED", None)
    done = subprocess.run([sys.executable, str(INSTALL), "--dry-run", "--system", system, *options],
                          capture_output=True, text=True, env=env, timeout=60, check=True)
    return done.stdout


@pytest.mark.parametrize("system", ["linux", "macos", "windows"])
def test_each_system_gets_the_tested_set_and_a_launcher(system: str) -> None:
    plan = plan_for(system)
    python = "/tmp/venv/Scripts/python.exe" if system == "windows" else "/tmp/venv/bin/python"
    assert f"{python} -m pip" in plan and "-c " + str(REPO / "installer" / "constraints.txt") in plan
    assert "[gui,torch,proof,kokoro]" in plan and "torch==2.11.0" in plan
    launcher = {"linux": "desktop entry:", "macos": "Audiobook Studio.app", "windows": "Start Menu"}[system]
    assert launcher in plan
    if system == "windows":
        assert "pythonw.exe" in plan and "CreateShortcut" in plan  # no console window behind the studio


def test_the_options_are_the_same_everywhere() -> None:
    for system in ("linux", "macos", "windows"):
        small = plan_for(system, "--no-torch", "--no-proof", "--no-kokoro")
        assert "[gui]" in small and "torch==" not in small
        dev = plan_for(system, "--dev")
        assert "test,triton]" in dev
        assert ("triton-env.sh" in dev) is (system == "linux")  # the server environment is Linux's alone


def test_install_sh_takes_the_same_options_and_hands_them_on() -> None:
    done = subprocess.run(["bash", str(REPO / "installer" / "install.sh"), "--bogus"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown option --bogus" in done.stderr
    helped = subprocess.run(["bash", str(REPO / "installer" / "install.sh"), "--help"], capture_output=True, text=True)
    for option in ("--dev", "--no-torch", "--no-proof", "--no-kokoro", "--triton"):
        assert option in helped.stdout
    assert 'installer/install.py" "$@"' in (REPO / "installer" / "install.sh").read_text()


def test_the_mac_app_starts_the_studio(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    plan = install.Plan("macos", venv)
    app = install.write_mac_app(plan, tmp_path / "Applications")
    with open(app / "Contents" / "Info.plist", "rb") as fh:
        info = plistlib.load(fh)
    script = app / "Contents" / "MacOS" / info["CFBundleExecutable"]
    assert info["CFBundlePackageType"] == "APPL" and os.access(script, os.X_OK)
    assert "epub" in info["CFBundleDocumentTypes"][0]["CFBundleTypeExtensions"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and "usage:" in done.stdout  # `python -m studio gui --help`, from the bundle


def test_a_windows_shortcut_survives_a_quote_in_the_path() -> None:
    plan = install.Plan("windows", Path("C:/Users/O'Brien/studio/.venv"))
    script = install.windows_shortcut_script(plan, Path("C:/Users/O'Brien/Start Menu/Audiobook Studio.lnk"))
    assert "'C:/Users/O''Brien/studio/.venv/Scripts/pythonw.exe'" in script  # PowerShell doubles a quote
    assert script.count("'") % 2 == 0


def test_the_desktop_entry_opens_a_book() -> None:
    entry = install.desktop_entry(install.Plan("linux", Path("/opt/v")))
    assert "Exec=/opt/v/bin/studio gui %f" in entry and "application/epub+zip" in entry
