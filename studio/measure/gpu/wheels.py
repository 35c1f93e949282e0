"""The wheels the GPU machine lacks: chosen and downloaded here, unpacked there.

Why a list of its own: the GPU machine has Python 3.12 with torch, numpy, onnx,
onnxruntime, nvidia-ml-py and cupy, and cannot download anything. The torch engine
imports coqui-tts's ``Vits``, and that import pulls in the packages below (measured
with an import trace of ``TTS.tts.models.vits``; the check records what it really
imported, and a test compares that with this list). Each is pinned to the version
installed here, the one the test suite ran with; torchaudio must match the GPU's
torch (2.11).

scipy is the exception: coqui only runs ``import scipy`` at module level (its
``scipy.stats`` / ``scipy.signal`` calls are in training and audio-file helpers,
never in inference), and the full wheel (35 MB) would not fit the 64 MiB that
travels to the GPU machine. So the wheel is *trimmed* to the files ``import scipy``
loads (the package root and ``scipy._lib``); the manifest says so, and the
installer never puts the trimmed copy over a real scipy the machine may have.

This module needs only the standard library: it runs on the GPU machine before
anything else is importable (``python3 -m studio.measure.gpu.wheels install``).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import re
import subprocess
import sys
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

log = logging.getLogger(__name__)

#: platforms the GPU machine's pip accepts (glibc 2.28+, x86_64)
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
GPU_PYTHON = "3.12"
#: the GPU machine's torch series: torchaudio must be built for it
GPU_TORCH = "2.11"
#: distributions the GPU machine already has (and what they depend on); never shipped
GPU_MACHINE_HAS = frozenset({
    "torch", "numpy", "onnx", "onnxruntime", "nvidia-ml-py", "cupy-cuda13x", "cupy",
    "filelock", "typing-extensions", "typing_extensions", "sympy", "mpmath", "networkx", "jinja2",
    "markupsafe", "setuptools", "protobuf", "ml-dtypes", "ml_dtypes", "flatbuffers", "coloredlogs",
    "humanfriendly", "fastrlock", "triton",
})
#: marker of the trimmed scipy in the manifest
TRIMMED_NOTE = "trimmed to what `import scipy` loads (coqui imports scipy at module level; inference calls none of it)"


@dataclass(frozen=True)
class WheelSpec:
    """One distribution to ship: its name, the module it provides, whether to trim it."""

    dist: str
    module: str
    trim: bool = False


#: what ``import TTS.tts.models.vits`` (and the compact weights) need beyond the GPU machine's packages
WHEELS: tuple[WheelSpec, ...] = (
    WheelSpec("coqui-tts", "TTS"),
    WheelSpec("coqpit-config", "coqpit"),
    WheelSpec("coqui-tts-trainer", "trainer"),
    WheelSpec("anyascii", "anyascii"),
    WheelSpec("monotonic-alignment-search", "monotonic_alignment_search"),
    WheelSpec("librosa", "librosa"),
    WheelSpec("lazy-loader", "lazy_loader"),
    WheelSpec("scipy", "scipy", trim=True),
    WheelSpec("soundfile", "soundfile"),
    WheelSpec("cffi", "_cffi_backend"),
    WheelSpec("torchaudio", "torchaudio"),
    # coqui-tts refuses to import without torchcodec on torch >= 2.9 (it checks that it is there)
    WheelSpec("torchcodec", "torchcodec"),
    WheelSpec("pyyaml", "yaml"),
    WheelSpec("six", "six"),
    WheelSpec("tqdm", "tqdm"),
    WheelSpec("packaging", "packaging"),
    WheelSpec("fsspec", "fsspec"),
    WheelSpec("safetensors", "safetensors"),
)


def pinned_versions() -> dict[str, str]:
    """``{dist: version}`` as installed here (the versions the tests ran with)."""
    versions = {w.dist: importlib.metadata.version(w.dist) for w in WHEELS}
    if not versions["torchaudio"].startswith(GPU_TORCH + "."):
        raise RuntimeError(f"torchaudio {versions['torchaudio']} here; the GPU machine's torch is {GPU_TORCH}")
    return versions


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def download(dest: Path, python_version: str = GPU_PYTHON, versions: dict[str, str] | None = None) -> list[Path]:
    """Download every wheel of :data:`WHEELS` for ``python_version`` on Linux x86_64 into ``dest``."""
    versions = versions or pinned_versions()
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
           "--python-version", python_version, "--implementation", "cp", "-d", str(dest)]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    cmd += [f"{dist}=={version}" for dist, version in versions.items()]
    subprocess.run(cmd, check=True)
    found = []
    for spec in WHEELS:
        hits = sorted(dest.glob(f"{_normal(spec.dist)}-{versions[spec.dist]}-*.whl"))
        if len(hits) != 1:
            raise RuntimeError(f"expected one wheel of {spec.dist} {versions[spec.dist]} in {dest}, found {hits}")
        found.append(hits[0])
    return found


def _keep_for_import(name: str, package: str) -> bool:
    """Files of a trimmed wheel: the package's top-level modules, ``_lib``'s, and the metadata."""
    if ".dist-info/" in name:
        return True
    parts = name.split("/")
    if parts[0] != package:
        return False
    return len(parts) == 2 or (len(parts) == 3 and parts[1] == "_lib")


def trim_wheel(path: Path, package: str) -> int:
    """Rewrite the wheel at ``path`` keeping only what ``import package`` needs; returns bytes saved."""
    before = path.stat().st_size
    tmp = path.with_suffix(".tmp")
    record_lines = []
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        for info in src.infolist():
            if info.filename == record_name or not _keep_for_import(info.filename, package):
                continue
            data = src.read(info)
            out.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record_lines.append(f"{info.filename},sha256={digest},{len(data)}")
        record_lines.append(f"{record_name},,")
        out.writestr(record_name, "\n".join(record_lines) + "\n")
    tmp.replace(path)
    return before - path.stat().st_size


@dataclass(frozen=True)
class ShippedWheel:
    """One entry of the prepared folder's wheel manifest."""

    file: str
    dist: str
    version: str
    module: str
    bytes: int
    trimmed: str = ""


def prepare_wheels(dest: Path, python_version: str = GPU_PYTHON) -> list[ShippedWheel]:
    """Download (and trim) the wheels into ``dest``; write and return ``dest/wheels.json``."""
    versions = pinned_versions()
    shipped = []
    for spec, path in zip(WHEELS, download(dest, python_version, versions)):
        note = ""
        if spec.trim:
            saved = trim_wheel(path, spec.module)
            note = TRIMMED_NOTE
            log.info("trimmed %s: %.1f MiB saved", path.name, saved / 2**20)
        shipped.append(ShippedWheel(path.name, spec.dist, versions[spec.dist], spec.module, path.stat().st_size, note))
    (dest / "wheels.json").write_text(json.dumps([asdict(w) for w in shipped], indent=1), encoding="utf-8")
    return shipped


def install(wheel_dir: Path, target: Path) -> dict[str, str]:
    """Unpack each listed wheel whose module this Python cannot import into ``target``.

    A wheel is a zip meant to be unpacked into site-packages; no pip is needed.
    Returns ``{dist: "installed" | "present"}``; ``target`` then goes first on
    ``PYTHONPATH``.
    """
    entries = json.loads((wheel_dir / "wheels.json").read_text(encoding="utf-8"))
    target.mkdir(parents=True, exist_ok=True)
    done = {}
    for entry in entries:
        if importlib.util.find_spec(entry["module"]) is not None:
            done[entry["dist"]] = "present"
            continue
        with zipfile.ZipFile(wheel_dir / entry["file"]) as zf:
            zf.extractall(target)
        done[entry["dist"]] = "installed" + (" (trimmed)" if entry.get("trimmed") else "")
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m studio.measure.gpu.wheels")
    sub = parser.add_subparsers(dest="cmd", required=True)
    inst = sub.add_parser("install", help="unpack the prepared wheels this Python lacks")
    inst.add_argument("--wheels", type=Path, required=True)
    inst.add_argument("--target", type=Path, required=True)
    inst.add_argument("--report", type=Path, help="write {dist: what was done} here as JSON")
    args = parser.parse_args(argv)
    done = install(args.wheels, args.target)
    if args.report:
        args.report.write_text(json.dumps(done, indent=1), encoding="utf-8")
    for dist, what in done.items():
        print(f"  {dist:<28} {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
