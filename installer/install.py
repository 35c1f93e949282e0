#!/usr/bin/env python3
"""Installs the audiobook studio into a virtual environment, on Linux, macOS or Windows.

    python installer/install.py              # app + torch presets + a launcher for the system
    python installer/install.py --dev        # also the test tools (pytest, pytest-qt, ...)
    python installer/install.py --no-torch   # ONNX voices only (small install)
    python installer/install.py --no-proof   # without proof-listening (faster-whisper and
                                             # its 145 MB speech model)
    python installer/install.py --no-kokoro  # without the offline Kokoro voices
    python installer/install.py --triton     # also render on Triton servers (client); on Linux
                                             # also the CPU Triton server environment (.venv-triton)
    python installer/install.py --dry-run    # say what would be done, do nothing

Rerunnable: each step checks what is already there and says what it did. Standard
library only, so any Python 3.10+ runs it before anything is installed. System
packages are not its business: on Linux `bash installer/install.sh` installs the few
that have no wheel (PortAudio, Qt's xcb libraries) and then runs this; on Windows and
macOS every piece comes as a wheel (ffmpeg from imageio-ffmpeg, PortAudio inside
sounddevice, espeak-ng's data inside piper-tts).

Environment: STUDIO_VENV (default: .venv in the checkout), STUDIO_UNLOCKED=1 (install
the newest versions pyproject.toml allows instead of the tested set in
installer/constraints.txt).
"""

from __future__ import annotations

import argparse
import os
import platform
import plistlib
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CONSTRAINTS = HERE / "installer" / "constraints.txt"
MIN_PYTHON = (3, 10)
#: the torch build for Windows with an NVIDIA GPU (PyPI's Windows torch is CPU-only)
TORCH_CUDA_INDEX = "https://download.pytorch.org/whl/cu128"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_PACKAGES = ("torch", "torchaudio", "torchcodec")
APP_NAME = "Audiobook Studio"
MIME_TYPES = ("text/plain;text/markdown;text/html;application/epub+zip;"
              "application/vnd.openxmlformats-officedocument.wordprocessingml.document;application/pdf;")


def say(message: str) -> None:
    print(f"[install] {message}", flush=True)


@dataclass(frozen=True)
class Plan:
    """What to install, for which system (``linux``, ``macos`` or ``windows``)."""

    system: str
    venv: Path
    torch: bool = True
    proof: bool = True
    kokoro: bool = True
    dev: bool = False
    triton: bool = False
    pinned: bool = True
    dry_run: bool = False

    @property
    def python(self) -> Path:
        """The environment's interpreter (``Scripts\\python.exe`` on Windows)."""
        return self.venv / ("Scripts/python.exe" if self.system == "windows" else "bin/python")

    @property
    def studio(self) -> Path:
        return self.venv / ("Scripts/studio.exe" if self.system == "windows" else "bin/studio")

    @property
    def gui_python(self) -> Path:
        """The interpreter a launcher starts the window with (``pythonw``: no console window on Windows)."""
        return self.venv / "Scripts/pythonw.exe" if self.system == "windows" else self.python

    def extras(self) -> str:
        names = ["gui"]
        names += ["torch"] if self.torch else []
        names += ["proof"] if self.proof else []
        names += ["kokoro"] if self.kokoro else []
        names += ["test"] if self.dev else []
        names += ["triton"] if self.dev or self.triton else []
        return ",".join(names)


def this_system() -> str:
    return {"win32": "windows", "darwin": "macos"}.get(sys.platform, "linux")


def run(plan: Plan, cmd: list[str], *, check: bool = True) -> bool:
    """Run ``cmd`` (or only print it on a dry run); False when it failed and ``check`` is off."""
    if plan.dry_run:
        print("  $ " + " ".join(shlex.quote(str(c)) for c in cmd), flush=True)
        return True
    done = subprocess.run([str(c) for c in cmd], check=False)
    if done.returncode != 0 and check:
        raise SystemExit(f"install: failed ({done.returncode}): {' '.join(map(str, cmd))}")
    return done.returncode == 0


def quiet(plan: Plan, code: str) -> bool:
    """Does the environment's Python run ``code`` (a check; never on a dry run)."""
    if plan.dry_run or not plan.python.exists():
        return False
    return subprocess.run([str(plan.python), "-c", code], capture_output=True, check=False).returncode == 0


def pinned_versions() -> dict[str, str]:
    """``{name: version}`` of the tested set (names lower-cased, ``_`` as ``-``)."""
    pins = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and not line.startswith("#"):
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


def make_venv(plan: Plan) -> None:
    if plan.python.exists():
        say(f"virtual environment: reusing {plan.venv}")
        return
    say(f"virtual environment: creating {plan.venv}")
    run(plan, [sys.executable, "-m", "venv", str(plan.venv)])


def pip(plan: Plan) -> list[str]:
    cmd = [str(plan.python), "-m", "pip", "--disable-pip-version-check", "-q", "install"]
    if plan.pinned and CONSTRAINTS.is_file():
        cmd += ["-c", str(CONSTRAINTS)]
    return cmd


def nvidia_gpu() -> bool:
    """An NVIDIA driver that answers (the CUDA build of torch is worth its 2 GB only then)."""
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], capture_output=True, check=False).returncode == 0


def install_torch(plan: Plan, gpu: bool) -> None:
    """Torch, the build that fits this machine; coqui-tts needs torchaudio and torchcodec of the same release."""
    if quiet(plan, "import torch, torchaudio"):
        say("torch: already installed")
        return
    versions = pinned_versions()
    torch_pair = [f"{p}=={versions[p]}" for p in TORCH_PACKAGES[:2]]
    codec = f"torchcodec=={versions['torchcodec']}"
    if plan.system == "linux" and gpu:
        say("torch: NVIDIA driver found, installing PyPI's CUDA build")
        run(plan, pip(plan) + [*torch_pair, codec])
        return
    if plan.system == "windows" and gpu:
        say(f"torch: NVIDIA driver found, installing the CUDA build ({TORCH_CUDA_INDEX})")
        if not run(plan, pip(plan) + ["--index-url", TORCH_CUDA_INDEX, *torch_pair], check=False):
            say("torch: the CUDA build is unreachable; installing PyPI's (CPU-only on Windows)")
            run(plan, pip(plan) + torch_pair)
    elif plan.system == "macos":
        say("torch: PyPI's macOS build (CPU; Apple's GPU is not used by the studio yet)")
        run(plan, pip(plan) + torch_pair)
    else:
        say("torch: no NVIDIA driver, trying the CPU-only build")
        if not run(plan, pip(plan) + ["--timeout", "15", "--retries", "1", "--index-url", TORCH_CPU_INDEX,
                                      *torch_pair], check=False):
            say("torch: CPU-only wheels unreachable; installing PyPI's build")
            run(plan, pip(plan) + torch_pair)
    run(plan, pip(plan) + [codec])


def install_app(plan: Plan) -> None:
    # the distribution was called "studio" before it took a name of its own on the package index
    if quiet(plan, "import importlib.metadata as m; m.version('studio')"):
        say("studio: removing the old distribution name 'studio' (now audiobook-studio)")
        run(plan, [str(plan.python), "-m", "pip", "uninstall", "-y", "-q", "studio"])
        shutil.rmtree(HERE / "studio.egg-info", ignore_errors=True)
    say(f"studio: installing audiobook-studio (editable) with extras [{plan.extras()}]")
    run(plan, pip(plan) + ["-e", f"{HERE}[{plan.extras()}]"])


def triton_server_env(plan: Plan) -> None:
    """The CPU Triton server's own environment (Linux only: PyTriton ships Linux binaries)."""
    if not (plan.dev or plan.triton):
        return
    if plan.system != "linux":
        say("Triton server environment: Linux only (the client is installed; render on a server elsewhere)")
        return
    if not run(plan, ["bash", str(HERE / "installer" / "triton-env.sh")], check=False):
        say("Triton server environment: not created (the Triton tests will skip)")


# ------------------------------------------------------------------ launchers


def desktop_entry(plan: Plan) -> str:
    return (f"[Desktop Entry]\nType=Application\nName={APP_NAME}\n"
            "Comment=Render manuscripts as audiobooks with neural voices\n"
            f"Exec={plan.studio} gui %f\nTerminal=false\nCategories=AudioVideo;Audio;\nMimeType={MIME_TYPES}\n")


def write_mac_app(plan: Plan, folder: Path) -> Path:
    """``<folder>/Audiobook Studio.app``: a bundle whose executable starts the window (Finder,
    Launchpad and the Dock treat it as an app; dropping a book on it opens the book)."""
    app = folder / f"{APP_NAME}.app"
    macos = app / "Contents" / "MacOS"
    macos.mkdir(parents=True, exist_ok=True)
    script = macos / "studio-gui"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(str(plan.python))} -m studio gui "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    info = {
        "CFBundleName": APP_NAME, "CFBundleDisplayName": APP_NAME, "CFBundleIdentifier": "org.audiobook-studio.studio",
        "CFBundleExecutable": script.name, "CFBundlePackageType": "APPL", "CFBundleShortVersionString": "0.1.0",
        "LSMinimumSystemVersion": "11.0", "NSHighResolutionCapable": True,
        "CFBundleDocumentTypes": [{"CFBundleTypeRole": "Editor", "CFBundleTypeExtensions":
                                   ["epub", "docx", "pdf", "md", "txt", "html", "studio"]}],
    }
    with open(app / "Contents" / "Info.plist", "wb") as fh:
        plistlib.dump(info, fh)
    return app


def windows_shortcut_script(plan: Plan, link: Path) -> str:
    """PowerShell that writes a Start-menu shortcut (WScript.Shell: no extra package needed)."""
    def ps(value: object) -> str:
        return "'" + str(value).replace("'", "''") + "'"

    return ("$s = (New-Object -ComObject WScript.Shell).CreateShortcut(" + ps(link) + "); "
            f"$s.TargetPath = {ps(plan.gui_python)}; $s.Arguments = '-m studio gui'; "
            f"$s.WorkingDirectory = {ps(Path.home())}; $s.Description = {ps(APP_NAME)}; $s.Save()")


def launcher(plan: Plan) -> None:
    """The entry a person starts the studio from, as the system expects one."""
    if plan.system == "linux":
        apps = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "applications"
        path = apps / "audiobook-studio.desktop"
        if not plan.dry_run:
            apps.mkdir(parents=True, exist_ok=True)
            path.write_text(desktop_entry(plan), encoding="utf-8")
        say(f"desktop entry: {path}")
    elif plan.system == "macos":
        folder = Path.home() / "Applications"
        app = folder / f"{APP_NAME}.app" if plan.dry_run else write_mac_app(plan, folder)
        say(f"app: {app} (Launchpad and Spotlight find it; drag it to the Dock to keep it there)")
    else:
        start = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
        link = start / "Microsoft" / "Windows" / "Start Menu" / "Programs" / f"{APP_NAME}.lnk"
        if run(plan, ["powershell", "-NoProfile", "-NonInteractive", "-Command",
                      windows_shortcut_script(plan, link)], check=False):
            say(f"Start-menu entry: {link}")
        else:
            say(f"Start-menu entry: not made; start the studio with {plan.studio} gui")


# ------------------------------------------------------------------ the steps


def portaudio_note(plan: Plan) -> None:
    """Linux's sounddevice wheel has no PortAudio inside (Windows' and macOS' have)."""
    if plan.system != "linux" or plan.dry_run:
        return
    found = subprocess.run(["sh", "-c", "ldconfig -p 2>/dev/null | grep -q libportaudio.so.2"], check=False)
    if found.returncode != 0:
        say("PortAudio (preview playback) is missing: 'bash installer/install.sh' installs it with apt, "
            "or install libportaudio2 with your package manager")


def install(plan: Plan) -> None:
    if sys.version_info < MIN_PYTHON:
        raise SystemExit(f"install: Python {'.'.join(map(str, MIN_PYTHON))} or newer is needed "
                         f"(this is {sys.version.split()[0]}); see docs/installing.md")
    if plan.system == "macos" and platform.machine() == "x86_64" and plan.pinned and not plan.dry_run:
        raise SystemExit("install: this is an Intel Mac; the tested set needs Apple silicon (onnxruntime and torch "
                         "publish no x86-64 macOS wheels any more: installer/wheels.json). Untested: "
                         "STUDIO_UNLOCKED=1 python3 installer/install.py --no-torch")
    make_venv(plan)
    say("versions: the tested set (installer/constraints.txt)" if plan.pinned
        else "versions: the newest pyproject.toml allows (STUDIO_UNLOCKED=1)")
    if plan.torch:
        install_torch(plan, nvidia_gpu())
    install_app(plan)
    triton_server_env(plan)
    launcher(plan)
    portaudio_note(plan)
    say(f"done: {plan.studio}")


def parse(argv: list[str] | None = None) -> Plan:
    parser = argparse.ArgumentParser(prog="install.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dev", action="store_true", help="also the test and development tools (and --triton's)")
    parser.add_argument("--no-torch", action="store_true", help="ONNX voices only (small install)")
    parser.add_argument("--no-proof", action="store_true", help="without proof-listening's speech model")
    parser.add_argument("--no-kokoro", action="store_true", help="without the offline Kokoro voices")
    parser.add_argument("--triton", action="store_true", help="also render on Triton servers")
    parser.add_argument("--dry-run", action="store_true", help="say what would be done, do nothing")
    parser.add_argument("--system", choices=("linux", "macos", "windows"), default=this_system(),
                        help=argparse.SUPPRESS)  # a dry run's plan for another system (the tests)
    args = parser.parse_args(argv)
    venv = Path(os.environ.get("STUDIO_VENV") or HERE / ".venv")
    return Plan(args.system, venv, torch=not args.no_torch, proof=not args.no_proof, kokoro=not args.no_kokoro,
                dev=args.dev, triton=args.triton, pinned=os.environ.get("STUDIO_UNLOCKED") != "1"
                and CONSTRAINTS.is_file(), dry_run=args.dry_run or args.system != this_system())


def main(argv: list[str] | None = None) -> int:
    install(parse(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
